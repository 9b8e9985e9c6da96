"""Email to text: .eml, .mbox (one document per message) and Outlook .msg.

A message's page starts with its From, To, Cc, Date and Subject lines (so the people and
organisations in them are read by the model and become entities with this message as their
source), then its body (plain text preferred, else HTML made text). The same headers are
kept as metadata. Attachments, and the messages of a mailbox, are `Part`s: the ingest job
stores each as its own document linked to its parent (`path#key`). A message or
attachment past `MAX_MESSAGE_BYTES` is refused in one sentence.
"""

from __future__ import annotations

import email
import mailbox
import re
from collections.abc import Iterator
from email import policy
from email.message import EmailMessage
from email.utils import parsedate_to_datetime
from pathlib import Path

from docatlas.core.base.errors import DocumentError
from docatlas.core.base.paths import shown_name
from docatlas.core.ingest.books import html_to_text
from docatlas.core.ingest.loaded import Loaded, Part, damaged, iso_date, too_large

MAX_MESSAGE_BYTES = 100 << 20
HEADERS = (("From", "from"), ("To", "to"), ("Cc", "cc"), ("Date", "date"), ("Subject", "subject"))
_SAFE_KEY = re.compile(r"[^\w.\- ]+")


def _header_block(loaded: Loaded) -> str:
    return "\n".join(f"{label}: {loaded.metadata[key]}" for label, key in HEADERS if key in loaded.metadata)


def _date(value: str) -> str:
    try:
        return iso_date(parsedate_to_datetime(value))
    except (TypeError, ValueError, IndexError):
        return value


def _part_key(number: int, filename: str) -> str:
    return f"attachment-{number}-{_SAFE_KEY.sub('_', filename)[:80]}"


def _finish(loaded: Loaded, body: str, attachments: list[Part], path: Path, encrypted: bool) -> Loaded:
    if attachments:
        loaded.meta("attachments", ", ".join(part.name for part in attachments))
    if encrypted and not body.strip():
        raise DocumentError(f"{shown_name(path)} is encrypted (S/MIME or PGP); decrypt it in your mail "
                            "program, save it again and add it again.")
    header = _header_block(loaded)
    if "attachments" in loaded.metadata:
        header += f"\nAttachments: {loaded.metadata['attachments']}"
    loaded.pages.append((None, f"{header}\n\n{body.strip()}".strip()))
    loaded.parts = attachments
    return loaded


def message_loaded(message: EmailMessage, path: Path) -> Loaded:
    """One parsed message: headers as metadata and page, its attachments as parts."""
    loaded = Loaded()
    if not any(message.get(label) for label, _ in HEADERS):
        raise DocumentError(f"{shown_name(path)} does not look like an email (it has no From, To, Date "
                            "or Subject); save the message again from your mail program and add it again.")
    for label, key in HEADERS:
        try:
            value = message.get(label)
        except Exception:  # a malformed header must not lose the message
            value = None
        if value is not None:
            loaded.meta(key, _date(str(value)) if key == "date" else str(value))
    loaded.title = loaded.metadata.get("subject", "")
    encrypted = message.get_content_type() in ("multipart/encrypted", "application/pkcs7-mime",
                                               "application/x-pkcs7-mime")
    body = ""
    try:
        part = message.get_body(preferencelist=("plain", "html"))
        if part is not None:
            content = part.get_content()
            body = html_to_text(content) if part.get_content_type() == "text/html" else content
    except (LookupError, ValueError, AttributeError):  # an unknown charset or a broken part
        body = ""
    attachments = []
    for number, attached in enumerate(message.iter_attachments(), start=1):
        if attached.get_content_type() == "message/rfc822":
            inner = attached.get_payload(0) if attached.is_multipart() else None
            data = inner.as_bytes() if inner is not None else b""
            name = attached.get_filename() or f"message-{number}.eml"
        else:
            data, name = attached.get_payload(decode=True) or b"", attached.get_filename() or f"attachment-{number}"
        if data:
            attachments.append(Part(key=_part_key(number, name), name=name, data=data))
    return _finish(loaded, body, attachments, path, encrypted)


def load_eml(path: Path) -> Loaded:
    """One .eml message."""
    if path.stat().st_size > MAX_MESSAGE_BYTES:
        raise too_large(path, MAX_MESSAGE_BYTES >> 20, "an email")
    with open(path, "rb") as handle:
        message = email.message_from_binary_file(handle, policy=policy.default)
    return message_loaded(message, path)


def _mailbox_parts(path: Path) -> Iterator[Part]:
    box = mailbox.mbox(path, factory=None, create=False)
    try:
        for number, key in enumerate(box.keys(), start=1):
            raw = box.get_bytes(key)
            if len(raw) > MAX_MESSAGE_BYTES:
                continue
            message = email.message_from_bytes(raw, policy=policy.default)
            try:
                loaded = message_loaded(message, Path(f"{path}#message-{number}"))
            except DocumentError:
                continue
            yield Part(key=f"message-{number}", name=loaded.title or f"message {number}", data=raw, loaded=loaded)
    finally:
        box.close()


def load_mbox(path: Path) -> Loaded:
    """A mailbox: an index page (one line a message); every message is a part of its own."""
    with open(path, "rb") as handle:
        if not handle.read(5) == b"From ":
            raise damaged(path, "mailbox", ".mbox")
    loaded = Loaded()
    lines = []
    box = mailbox.mbox(path, factory=None, create=False)
    try:
        for number, key in enumerate(box.keys(), start=1):
            headers = email.message_from_bytes(box.get_bytes(key)[:65536], policy=policy.compat32)
            lines.append(f"Message {number}: {headers.get('Subject', '')} — from {headers.get('From', '')}, "
                         f"{headers.get('Date', '')}")
    finally:
        box.close()
    loaded.meta("messages", str(len(lines)))
    loaded.pages.append((None, "\n".join(" ".join(line.split()) for line in lines)))
    loaded.parts = _mailbox_parts(path)
    return loaded


def _msg_string(message, tag: str) -> str:
    """A string property of a .msg (`tag` without its type), "" when it is absent."""
    try:
        return message.getStringStream(f"__substg1.0_{tag}") or ""
    except Exception:  # a damaged stream is a missing value, not a lost message
        return ""


def _msg_sender(message) -> str:
    """The sender as "Name <address>": extract-msg takes the address only from the SMTP
    property (PR_SENDER_SMTP_ADDRESS); a message that has it only as PR_SENDER_EMAIL_ADDRESS
    (with address type SMTP) would lose it."""
    sender = message.sender or ""
    address = _msg_string(message, "0C1F")
    if "@" in address and "<" not in sender and address not in sender:
        sender = f"{sender} <{address}>" if sender else address
    return sender


def load_msg(path: Path) -> Loaded:
    """An Outlook .msg message with its attachments."""
    import extract_msg
    from extract_msg.exceptions import ExMsgBaseException

    if path.stat().st_size > MAX_MESSAGE_BYTES:
        raise too_large(path, MAX_MESSAGE_BYTES >> 20, "an email")
    try:
        message = extract_msg.openMsg(str(path), delayAttachments=False)
    except (ExMsgBaseException, OSError, ValueError) as exc:
        if isinstance(exc, FileNotFoundError):
            raise
        raise damaged(path, "Outlook message", ".msg") from exc
    except Exception as exc:  # olefile raises many types on damaged files
        raise damaged(path, "Outlook message", ".msg") from exc
    try:
        loaded = Loaded()
        for value, key in ((_msg_sender(message), "from"), (message.to or _msg_string(message, "0E04"), "to"),
                           (message.cc or _msg_string(message, "0E03"), "cc"),
                           (iso_date(message.date), "date"), (message.subject, "subject")):
            loaded.meta(key, value)
        loaded.title = loaded.metadata.get("subject", "")
        body = message.body or ""
        if not body.strip() and message.htmlBody:
            body = html_to_text(message.htmlBody.decode("utf-8", "replace"))
        attachments = []
        for number, attached in enumerate(message.attachments, start=1):
            name = attached.longFilename or attached.shortFilename or f"attachment-{number}"
            data = attached.data
            if isinstance(data, bytes) and data:
                attachments.append(Part(key=_part_key(number, name), name=name, data=data))
        return _finish(loaded, body, attachments, path, encrypted=False)
    except DocumentError:
        raise
    except Exception as exc:
        raise damaged(path, "Outlook message", ".msg") from exc
    finally:
        message.close()
