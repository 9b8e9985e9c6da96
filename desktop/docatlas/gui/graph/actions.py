"""The explorer's edits and exports: asks what to do, pushes undoable commands, runs them in order.

Each edit is a `StoreEdit` on the explorer's `QUndoStack`; its store work is an
`edit_job` on the window runner's writer thread (a connection of its own, in the order
made), and the graph is reloaded after it (the layout cache keeps every node where it
was). Questions go through the explorer's `Prompter`, so tests answer them without a
modal dialog. The editor knows the explorer only as an `EditedView` (defined here), so
the import goes one way: explorer -> actions.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QKeySequence, QUndoStack

from docatlas.core.graph import edits
from docatlas.core.graph.suggest import Suggestion, list_suggestions
from docatlas.core.storage.database import Store
from docatlas.core.storage.graph_reads import entity_description
from docatlas.gui.graph import merging
from docatlas.gui.graph.commands import StoreEdit
from docatlas.gui.graph.edited_view import EditedView
from docatlas.gui.graph.export import VIEW_FORMATS, export_view
from docatlas.gui.graph.shown_export import SHOWN_FORMATS
from docatlas.gui.graph.suggestions import SuggestionsDialog
from docatlas.gui.jobs.graph import edit_job, export_job, read_job, shown_export_job, suggest_job, table_csv_job
from docatlas.gui.tasks import BackgroundTask, TaskFailure

FILTERS = {"png": "PNG image (*.png)", "svg": "SVG image (*.svg)", "graphml": "GraphML (*.graphml)",
           "gexf": "GEXF (*.gexf)", "json": "JSON (*.json)", "csv": "Folder for CSV files (*)"}


READ_DESCRIPTION, READ_SUGGESTIONS = "Reading the description", "Reading the suggestions"
READS = (READ_DESCRIPTION, READ_SUGGESTIONS)


class GraphEditor(QObject):
    """Edits, merges, suggestions and exports for one explorer."""

    edited = Signal()  # an edit (or undo) reached the store; a reload follows
    editFailed = Signal(str)
    exported = Signal(str)  # path written

    def __init__(self, explorer: EditedView, parent: QObject | None = None):
        super().__init__(parent)
        self.explorer = explorer
        self.tasks = explorer.tasks
        self.stack = QUndoStack(self)
        self._writes: list[BackgroundTask] = []  # queued or running, in order
        self.dialog: SuggestionsDialog | None = None
        self._token = object()  # this editor's read keys, and no other's
        self._closed = False
        bar = explorer.toolbar
        undo, redo = self.stack.createUndoAction(self, "Undo"), self.stack.createRedoAction(self, "Redo")
        undo.setShortcut(QKeySequence.StandardKey.Undo)
        redo.setShortcut(QKeySequence.StandardKey.Redo)
        bar.view.addAction(undo)
        bar.view.addAction(redo)
        explorer.addAction(undo)
        explorer.addAction(redo)
        self.undo_action, self.redo_action = undo, redo
        explorer.loaded.connect(self._refresh_dialog)

    # -- running edits -------------------------------------------------------------------

    def run_edit(self, job: Callable[[Store], None], command: StoreEdit) -> None:
        """Queue a store job (see `commands.EditHost`)."""
        self._write("Editing the graph", edit_job(self.explorer.store.path, job), lambda _: self._done(),
                    lambda failure: self._failed(failure, command))

    def _write(self, name: str, job, on_success: Callable, on_failure: Callable | None = None) -> None:
        self._writes = [task for task in self._writes if not task.is_done]
        self._writes.append(self.tasks.run(name, job, writes=True, on_success=on_success, on_failure=on_failure))

    @property
    def busy(self) -> bool:
        """True while an edit (or a suggestion search, or an export) runs or waits."""
        return any(not task.is_done for task in self._writes)

    def _done(self) -> None:
        self.edited.emit()
        if not self.busy:  # the last one queued: reload once for all of them
            self.explorer.reload()

    def _failed(self, failure: TaskFailure, command: StoreEdit) -> None:
        message = failure.message
        index = self.stack.index()
        if index > 0 and self.stack.command(index - 1) is command:
            command.setObsolete(True)
            self.stack.undo()
        self.editFailed.emit(message)
        self.explorer.prompter.inform(self.explorer, "Edit not made", message)
        if not self.busy:
            self.explorer.reload()

    def push(self, text: str, apply: Callable, revert: Callable) -> StoreEdit:
        """Make an undoable edit."""
        command = StoreEdit(self, text, apply, revert)
        self.stack.push(command)
        return command

    # -- actions from the panel ------------------------------------------------------------

    def act(self, action: str) -> None:
        """Do what a panel button asks, for the current selection."""
        explorer = self.explorer
        if action == "delete_relation" and explorer.selected_edge is not None:
            self.delete_relation(*explorer.selected_edge)
        elif action == "merge":
            self.merge_selection()
        elif action == "neighbours":
            explorer.toolbar.neighbours.setChecked(True)
        elif explorer.selected_keys:
            getattr(self, action)(explorer.selected_keys[0])

    def _node(self, key: str) -> tuple[str, str]:
        model = self.explorer.model
        i = model.index[key]
        return model.names[i], model.types[i]

    def rename(self, key: str) -> None:
        """Ask for a new name; a name another entity has offers to merge into that one instead."""
        name, _ = self._node(key)
        answer = self.explorer.prompter.text(self.explorer, "Rename", f"New name for “{name}”:", name)
        if answer is None or not answer.strip() or answer.strip() == name:
            return
        taken = merging.named(self.explorer.model, answer, exclude=key)
        if taken is not None:
            other, _ = self._node(taken)
            if self.explorer.prompter.confirm(self.explorer, "Rename",
                                              f"“{other}” is already an entity. Merge “{name}” into “{other}” "
                                              "instead? Undo takes the merge back."):
                self.merge([key, taken], taken)
            return
        self.push(f"Rename “{name}”", lambda store, prev: edits.edit(
            store, "rename", key, {"name": answer}, override_id=prev), edits.undo)

    def retype(self, key: str) -> None:
        """Ask for a type (a known one, or a new one)."""
        name, current = self._node(key)
        types = list(self.explorer.model.type_names)
        answer = self.explorer.prompter.choose(self.explorer, "Change type", f"Type of “{name}”:", types,
                                               editable=True, current=max(types.index(current), 0))
        if answer is not None and answer.strip() and answer.strip().lower() != current:
            self.push(f"Change the type of “{name}”", lambda store, prev: edits.edit(
                store, "retype", key, {"type": answer}, override_id=prev), edits.undo)

    def describe(self, key: str) -> None:
        """Ask for a description."""
        name, _ = self._node(key)

        def ask(found: object) -> None:  # the description as stored, read on the runner
            current = found if isinstance(found, str) else ""
            answer = self.explorer.prompter.long_text(self.explorer, "Edit description", f"Description of “{name}”:",
                                                      current)
            if answer is not None and answer != current:
                self.push(f"Describe “{name}”", lambda store, prev: edits.edit(
                    store, "describe", key, {"description": answer}, override_id=prev), edits.undo)
        self._read(READ_DESCRIPTION, lambda store: entity_description(store, key), ask)

    def delete(self, key: str) -> None:
        """Delete an entity after a confirmation."""
        name, _ = self._node(key)
        if self.explorer.prompter.confirm(self.explorer, "Delete entity",
                                          f"Delete “{name}” and its relations? New mentions stay hidden; "
                                          "Undo brings it back."):
            self.explorer.clear_selection()
            self.push(f"Delete “{name}”", lambda store, prev: edits.edit(
                store, "delete", key, {}, override_id=prev), edits.undo)

    def delete_relation(self, a: str, b: str) -> None:
        """Delete a relation after a confirmation."""
        names = f"{self._node(a)[0]} — {self._node(b)[0]}"
        if self.explorer.prompter.confirm(self.explorer, "Delete relation", f"Delete the relation {names}?"):
            self.explorer.clear_selection()
            self.push(f"Delete the relation {names}", lambda store, prev: edits.edit(
                store, "delete_relation", a, {"other": b}, override_id=prev), edits.undo)

    def merge_selection(self) -> None:
        """Merge the selected entities (asking which survives), or ask what to merge one with."""
        explorer = self.explorer
        keys = list(explorer.selected_keys)
        if len(keys) == 1:
            other = merging.ask_other(explorer, keys[0])
            if other is None:
                return
            keys.append(other)
            target = keys[0]
        elif len(keys) > 1:
            names = [self._node(k)[0] for k in keys]
            answer = explorer.prompter.choose(explorer, "Merge", "Keep which entity? The others are merged into it.",
                                              names)
            if answer is None:
                return
            target = keys[names.index(answer)]
        else:
            return
        self.merge(keys, target)

    def merge(self, keys: list[str], target: str) -> None:
        """Merge `keys` into `target` (undoable)."""
        name, _ = self._node(target)
        self.explorer.select_keys([target])
        self.push(f"Merge {len(keys)} entities into “{name}”",
                  lambda store, prev: edits.merge(store, keys, target), edits.undo_merge)

    # -- suggestions -----------------------------------------------------------------------

    def show_suggestions(self) -> SuggestionsDialog:
        """Open (or raise) the merge-suggestions dialog."""
        if self.dialog is None:
            self.dialog = SuggestionsDialog(self, self.explorer)
        self.dialog.refresh()
        self.dialog.show()
        self.dialog.raise_()
        return self.dialog

    def read_suggestions(self, shown: Callable[[list[Suggestion]], None]) -> None:
        """Read the open suggestions on the runner and hand them to `shown` in the GUI thread."""
        self._read(READ_SUGGESTIONS, list_suggestions, shown)

    def _read(self, what: str, read: Callable[[Store], object], shown: Callable) -> None:
        """A latest-only read per `what` on a reader thread; its result goes to `shown` here."""
        if self._closed:
            return
        self.tasks.run(what, read_job(self.explorer.store.path, read), key=(what, self._token),
                       on_success=lambda found: None if self._closed else shown(found),
                       on_failure=lambda failure: self.editFailed.emit(failure.message))

    def accept_suggestion(self, suggestion_id: int, keep: str) -> None:
        """Merge a suggested pair (undoable)."""
        self.push("Accept a merge suggestion",
                  lambda store, prev: edits.accept_suggestion(store, suggestion_id, keep), edits.undo_merge)

    def reject_suggestion(self, suggestion_id: int) -> None:
        """Mark a suggested pair as different (undoable)."""
        self.push("Reject a merge suggestion",
                  lambda store, prev: edits.reject_suggestion(store, suggestion_id), edits.undo_merge)

    def find_suggestions(self) -> None:
        """Look for likely duplicates (in the background), then show them."""
        self._write("Looking for duplicates", suggest_job(self.explorer.store.path), lambda _: self._refresh_dialog())

    def _refresh_dialog(self) -> None:
        if self.dialog is not None and self.dialog.isVisible():
            self.dialog.refresh()

    # -- export ----------------------------------------------------------------------------

    def export(self, fmt: str, path: str | None = None) -> None:
        """Write the view (png at 2x, svg), the shown graph (graphml, gexf) or the whole graph (json, csv)."""
        explorer = self.explorer
        path = path or explorer.prompter.save_path(explorer, "Export", f"graph.{fmt}", FILTERS[fmt])
        if not path:
            return
        if fmt in VIEW_FORMATS:
            try:
                self.exported.emit(str(export_view(explorer.canvas, Path(path), fmt)))
            except OSError as exc:
                explorer.prompter.inform(explorer, "Export failed", str(exc))
            return
        if fmt in SHOWN_FORMATS:
            if explorer.model is None or explorer.canvas.look is None:
                return
            job = shown_export_job(explorer.model, explorer.canvas.look, fmt, Path(path))
        else:
            job = export_job(explorer.store.path, fmt, Path(path))
        self._write("Exporting the graph", job, lambda out: self.exported.emit(str(out)),
                    lambda failure: explorer.prompter.inform(explorer, "Export failed", failure.message))

    def export_table(self, which: str, path: str | None = None) -> None:
        """Write the entity or relation table, as shown (filtered and sorted), to a CSV file."""
        explorer = self.explorer
        path = path or explorer.prompter.save_path(explorer, "Export the table", f"{which}.csv", "CSV (*.csv)")
        if not path:
            return
        table = explorer.tables.entities if which == "entities" else explorer.tables.relations
        self._write("Exporting the table", table_csv_job(list(table.columns), table.export_rows(), Path(path)),
                    lambda out: self.exported.emit(str(out)),
                    lambda failure: explorer.prompter.inform(explorer, "Export failed", failure.message))

    def shutdown(self, timeout_ms: int = 10_000) -> bool:
        """Wait for the queued edits (none is lost when the window closes); True if they ended in time.

        A read still running is waited for too, and its result is dropped unseen."""
        self._closed = True
        return self.tasks.stop([(what, self._token) for what in READS], timeout_ms) and \
            self.tasks.wait([task for task in self._writes if not task.is_done], timeout_ms)
