"""The Prompts tab: every prompt DocAtlas sends, the user's versions of them, and trying them out.

- `panel.PromptsPanel`: the tab (the list of prompts, import/export, the "graph is older" banner).
- `editor.PromptEditor`: one prompt: edit with highlighted placeholders and live checks and
  token counts, the read-only default, versions with diffs, and "try on a chunk".
- `jobs`: the background work (saving, trying, re-extracting), run by `gui.tasks.TaskRunner`.
"""
