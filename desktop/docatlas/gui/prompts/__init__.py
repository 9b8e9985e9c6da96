"""The Prompts tab: every prompt DocAtlas sends, the user's versions of them, and trying them out.

- `panel.PromptsPanel`: the tab (the list of prompts, import/export, the "graph is older" banner).
- `editor.PromptEditor`: one prompt: edit with highlighted placeholders and live checks and
  token counts, the read-only default, versions with diffs, and "try on a chunk".
- `sets.PromptSets`: import, export, the profile in use, extracting again.
Their background work (saving, trying, re-extracting) is in `gui.jobs.prompts`, run by the
window's `gui.tasks.TaskRunner`.
"""
