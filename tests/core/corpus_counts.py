"""Hand counts of the records a person can read in each corpus reply.

Keys are paths relative to the shared corpus folder; values are
(entities, relations) that `parse_reply` must return, after its documented rules.

How they were counted: every reply below was read in full, record by record. A record
counts when a reader can tell its name/endpoints and what it says, whatever the damage to
its delimiters, quotes, tags or layout. It does not count when it is junk by the parser's
rules (a whole sentence as a name, a relation whose endpoint is a type name such as
"event"), an exact repeat of a record already counted in the same reply, or a record cut
off by the end of the reply. Relations whose endpoint was never declared as an entity DO
count (merging creates the missing node later). The mock-cache counts were then checked
against a grep of the record tags (`"entity"`, `"relationship"`, `"relation"`, curly
variants included): every tagged record in those 38 GPT-4o replies is readable, so the
two agree.
"""

from __future__ import annotations

HAND_COUNTS: dict[str, tuple[int, int]] = {
    # ---------------------------------------------------------------- raw_outputs (small models)
    # 2 entities; the second lacks its closing quote but keeps its `)` and full sentence.
    "raw_outputs/breeze-7b_nanographrag_1986b4b33ac3cf691d014fe49b37f473.txt": (2, 0),
    # "Please provide the text document..." - a refusal, nothing to read.
    "raw_outputs/breeze-7b_nanographrag_1e7706bab5d8583d8634a4f1cd93a086.txt": (0, 0),
    # 6 entities (3 with unquoted N/A descriptions: name and type still readable),
    # 3 relations of 3 fields (no keywords, no strength), newline-separated, + keywords.
    "raw_outputs/breeze-7b_nanographrag_5f0f0226e92ce0a241382b55d3e1141c.txt": (6, 3),
    # 7 entities (5 of them with an extra value field: 5220000.0, 10.0, dates, a list
    # with unbalanced brackets), 1 relation, content_keywords, completion marker.
    "raw_outputs/breeze-7b_nanographrag_742425fbc4624cf5d512aaf8ea870426.txt": (7, 1),
    # prose summaries, no records.
    "raw_outputs/llama3.2_lightrag_0f1b74f203173fab3dbcd320cd949a41.txt": (0, 0),
    "raw_outputs/llama3.2_lightrag_4c692a803490740249618e8c3c6c20c4.txt": (0, 0),
    # 4 entities: tagged "organization", "entity" x2, "event"; 1 relation.
    "raw_outputs/qwen2.5_graphrag_chat-4b94cf327a603542a918f33b30306929.txt": (4, 1),
    # 3 entities; 4 relations of which 3 have the type "event" as target -> 1.
    "raw_outputs/qwen2.5_graphrag_chat-6de5f796e0aef7b1b1d6a7c579c9a4ca.txt": (3, 1),
    # 4 "entity" + 4 records tagged "event" = 8 entities; 3 relations (strengths 6, 8, 7).
    "raw_outputs/qwen2.5_graphrag_chat-6ebfb9efdf54aec979d03e033bf9616c.txt": (8, 3),
    # "does not contain any entities ... no entity-extraction can be performed" - refusal.
    "raw_outputs/qwen2.5_graphrag_chat-777357aaa4e2efb14b1df8515e588e04.txt": (0, 0),
    # 2 entities, 1 relation to an undeclared endpoint (kept); trailing note ignored.
    "raw_outputs/qwen2.5_graphrag_chat-83da70859254374bf4081dc78b8afb42.txt": (2, 1),
    # 11 entity rows: 3 whole sentences as names (one repeated), the geo row repeated 3x,
    # leaves 5 distinct: 選擇日期, 空間區域, 查詢所有空間, 圖書館2樓櫃台及5樓櫃台,
    # 當日預約、利用網頁預約. All 11 relation rows target "event"/"organization" -> 0.
    "raw_outputs/qwen2.5_graphrag_chat-c4cb0411b6efb1468d138ba23418f07c.txt": (5, 0),
    # ---------------------------------------------------------------- peer_cases/graphrag
    # stray `)` inside descriptions and a doubled `))` at the end.
    "peer_cases/graphrag/gi_2024-04_doc_variant1.txt": (3, 2),
    "peer_cases/graphrag/gi_2024-04_doc_variant2.txt": (2, 1),
    "peer_cases/graphrag/gi_2024-04_doc_variant3.txt": (2, 1),
    "peer_cases/graphrag/gi_simple_extraction_response.txt": (3, 2),
    # ---------------------------------------------------------------- nano-graphrag mock cache
    # GPT-4o replies for A Christmas Carol; all records readable (see module docstring).
    "peer_cases/nano_graphrag_mock_cache/048397f17875079ba9eaac4ae8fcd5e2.txt": (11, 9),
    # relations use `"|>9` (corrupted delimiter before the strength), inside a code fence.
    "peer_cases/nano_graphrag_mock_cache/08e3f86743dead684fc94f3e900ec57a.txt": (7, 7),
    "peer_cases/nano_graphrag_mock_cache/0b8904a29452c21999486f0ceaff4ad6.txt": (9, 5),
    "peer_cases/nano_graphrag_mock_cache/1777503299047730888ed17f667017fe.txt": (10, 2),
    "peer_cases/nano_graphrag_mock_cache/1870ac45d51c0bc4d7a14bc7396e90ba.txt": (5, 7),
    "peer_cases/nano_graphrag_mock_cache/3042fa5b0f8da7c0c3f971e97da23af4.txt": (8, 10),
    "peer_cases/nano_graphrag_mock_cache/3555195d34b098b107e92a19f4902c1f.txt": (9, 9),
    "peer_cases/nano_graphrag_mock_cache/389eea519c8f8ec54832f80b60c7ed1b.txt": (6, 6),
    "peer_cases/nano_graphrag_mock_cache/3ec761d55491b714b1b5b51247e91513.txt": (6, 8),
    # two relations written with curly quotes around every field and the tag.
    "peer_cases/nano_graphrag_mock_cache/47f7f7f38ad3a8c64452a5d1b333665b.txt": (9, 7),
    # tag "relation" instead of "relationship".
    "peer_cases/nano_graphrag_mock_cache/587cd9809b0bd6b7f79edc675c717dda.txt": (6, 5),
    # **Entities:** / **Relationships:** headings.
    "peer_cases/nano_graphrag_mock_cache/5aec45100bc860cdcea6bb992da6fe95.txt": (16, 11),
    "peer_cases/nano_graphrag_mock_cache/5c242ddd99813b118311df044a748a27.txt": (3, 2),
    "peer_cases/nano_graphrag_mock_cache/5de8dbd67ab7e113a525e8c76df1a328.txt": (8, 8),
    "peer_cases/nano_graphrag_mock_cache/5df3d880bb75735945676d696db44ebd.txt": (6, 7),
    "peer_cases/nano_graphrag_mock_cache/5e06dfe4107e1c73a1ed48f3ec4140e8.txt": (6, 15),
    "peer_cases/nano_graphrag_mock_cache/677ce2b05bf281bc452637f268281485.txt": (7, 6),
    "peer_cases/nano_graphrag_mock_cache/6809ad4e271767c56f8884ad4afa8eb9.txt": (13, 8),
    # ends with a lowercase <|complete|>.
    "peer_cases/nano_graphrag_mock_cache/6cf7c967ce656b4c9fd7ec33cff46e35.txt": (10, 9),
    "peer_cases/nano_graphrag_mock_cache/720d56c2cbc5c2d968c0e4e39a40813b.txt": (7, 4),
    "peer_cases/nano_graphrag_mock_cache/75c389c3eb024dc14514d91d26afa426.txt": (11, 10),
    "peer_cases/nano_graphrag_mock_cache/7a1cbe0976242e8f4ccdeaabafc20f9a.txt": (14, 13),
    # one relation uses `"</|>8` for its strength delimiter.
    "peer_cases/nano_graphrag_mock_cache/a4e8e3ec3dc5c90110a50b92bf1481b6.txt": (13, 13),
    "peer_cases/nano_graphrag_mock_cache/a621e60d4e6a7438e830500dd450a550.txt": (5, 5),
    # entities only, no completion marker.
    "peer_cases/nano_graphrag_mock_cache/aa3353ed9f666c936d3ab0e8e4f82f41.txt": (7, 0),
    "peer_cases/nano_graphrag_mock_cache/aa5e781b776e60f9a2c92f960d147854.txt": (8, 6),
    "peer_cases/nano_graphrag_mock_cache/abc900b96fa5a0bb56651140bcf42981.txt": (7, 6),
    # numbered lists under bold headings, no `##` at all.
    "peer_cases/nano_graphrag_mock_cache/b236a613dd72159bd0c1078cf5fd3aa8.txt": (5, 4),
    "peer_cases/nano_graphrag_mock_cache/be0dce3bdce9b8818b904c412dd18809.txt": (7, 6),
    "peer_cases/nano_graphrag_mock_cache/c9831c13f56027146f81b74418165ba8.txt": (9, 9),
    "peer_cases/nano_graphrag_mock_cache/cb3d8608a650c8531bc836f0597e98aa.txt": (5, 7),
    "peer_cases/nano_graphrag_mock_cache/ceddd2172fbfac2e644364a3bb1c422e.txt": (3, 5),
    # numbered lists, ends with a stray **##**.
    "peer_cases/nano_graphrag_mock_cache/d2b14e1e9efe92d57b1f0160f95f7b51.txt": (9, 6),
    "peer_cases/nano_graphrag_mock_cache/d732c37e6960d80dd6635845eb2bb2d8.txt": (6, 6),
    # one endpoint written "Seven Christmas Eves Ago " with a trailing space.
    "peer_cases/nano_graphrag_mock_cache/dcd71c915550f52fc3244efe0d280b65.txt": (7, 8),
    "peer_cases/nano_graphrag_mock_cache/dd0cc3f88a62ef9506974030a4935d4d.txt": (4, 3),
    "peer_cases/nano_graphrag_mock_cache/ddcd827902cb90e3815732d8882d3177.txt": (12, 0),
    "peer_cases/nano_graphrag_mock_cache/ee4e23b67d874b654646991a69d2a1c0.txt": (4, 3),
}

# Replies whose status is not "ok".
EXPECTED_STATUS: dict[str, str] = {
    "raw_outputs/breeze-7b_nanographrag_1e7706bab5d8583d8634a4f1cd93a086.txt": "refusal",
    "raw_outputs/qwen2.5_graphrag_chat-777357aaa4e2efb14b1df8515e588e04.txt": "refusal",
    "raw_outputs/llama3.2_lightrag_0f1b74f203173fab3dbcd320cd949a41.txt": "empty",
    "raw_outputs/llama3.2_lightrag_4c692a803490740249618e8c3c6c20c4.txt": "empty",
}
