"""A local graph in a window of its own: one entity's neighbourhood to a chosen depth, like Obsidian's.

The neighbourhood is laid out by itself on a reader thread (`jobs.graph.local_graph_job`)
and shown on a canvas of its own, with the root selected; changing the depth lays it out
again. Clicking a node here selects it in the main explorer too (`nodeChosen`);
double-clicking one makes it the new root.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QDialog, QHBoxLayout, QLabel, QSpinBox, QVBoxLayout, QWidget

from docatlas.gui.graph.canvas import GraphCanvas
from docatlas.gui.graph.model import GraphModel
from docatlas.gui.graph.query import Look, ViewSpec
from docatlas.gui.graph.scene import Scene
from docatlas.gui.jobs.graph import local_graph_job
from docatlas.gui.tasks import TaskRunner


class LocalGraphView(QDialog):
    """The neighbourhood of one node of `model`, in its own non-modal window."""

    ready = Signal()  # a local graph is on the canvas
    nodeChosen = Signal(str)  # an entity key clicked here

    def __init__(self, tasks: TaskRunner, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Local graph")
        self.tasks = tasks
        self.key = ("local graph", object())
        self.model: GraphModel | None = None  # the whole graph
        self.local: GraphModel | None = None  # the neighbourhood shown
        self.root_key = ""
        self.spec = ViewSpec()
        self.title = QLabel()
        self.title.setTextFormat(Qt.TextFormat.PlainText)
        self.depth = QSpinBox(prefix="Depth ", minimum=1, maximum=4, value=1)
        self.depth.setToolTip("How many links away from the entity to show")
        self.depth.valueChanged.connect(lambda _: self._lay_out())
        self.canvas = GraphCanvas(tasks, self)
        self.canvas.nodeClicked.connect(lambda node, _additive: self._clicked(node))
        self.canvas.nodeDoubleClicked.connect(lambda node: self.show_node(self.model, self.local.keys[node],
                                                                           self.spec))
        top = QHBoxLayout()
        top.addWidget(self.title, 1)
        top.addWidget(self.depth)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.canvas, 1)
        self.resize(720, 540)

    def show_node(self, model: GraphModel, key: str, spec: ViewSpec) -> None:
        """Show the neighbourhood of entity `key` (colours and sizes as in `spec`)."""
        self.model, self.root_key, self.spec = model, key, spec
        self.title.setText(f"Around “{model.names[model.index[key]]}”")
        self.show()
        self.raise_()
        self._lay_out()

    def _lay_out(self) -> None:
        if self.model is None or self.root_key not in self.model.index:
            return
        spec = ViewSpec(colour_mode=self.spec.colour_mode, depth=self.depth.value(), size_mode=self.spec.size_mode,
                        theme=self.spec.theme)
        self.tasks.run("Laying out the local graph", local_graph_job(self.model, self.model.index[self.root_key],
                                                                     spec), key=self.key, on_success=self._shown)

    def _shown(self, result: tuple[GraphModel, Scene, Look]) -> None:
        self.local, scene, look = result
        self.canvas.selection = [0]
        self.canvas.set_scene(self.local, scene, look, fit=True)
        count = self.local.size - 1
        self.setWindowTitle(f"Local graph — {count} neighbour{'s' if count != 1 else ''} to depth {self.depth.value()}")
        self.ready.emit()

    def _clicked(self, node: int) -> None:
        self.canvas.selection = [node]
        self.canvas.update()
        self.nodeChosen.emit(self.local.keys[node])

    def shutdown(self, timeout_ms: int = 5000) -> bool:
        """Stop laying out and rendering."""
        return self.tasks.stop([self.key], timeout_ms) and self.canvas.shutdown()
