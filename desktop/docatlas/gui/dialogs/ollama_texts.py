"""The set-up dialog's words: what to install, the pull notice, the remote-host warnings, the lines
that describe one host and one model (all plain text but INSTRUCTIONS, which is ours)."""

from __future__ import annotations

from docatlas.core.llm.admin import ModelInfo, OllamaProbe, host_label, remote_hosts
from docatlas.gui.formatting import human_size

INSTRUCTIONS = (
    "<p>DocAtlas reads your documents with a language model that runs on your computer in "
    "<b>Ollama</b>.</p><ol>"
    "<li>Install Ollama from <a href='https://ollama.com/download'>ollama.com/download</a>.</li>"
    "<li>Start it: open the Ollama app, or run <code>ollama serve</code> in a terminal.</li>"
    "<li>Get a chat model and an embedding model, e.g. <code>ollama pull qwen2.5:7b</code> and "
    "<code>ollama pull nomic-embed-text</code> (or use Pull below).</li></ol>"
)
PULL_NOTICE = ("Pull downloads the model from the internet (ollama.com) through Ollama. It is the only "
               "time DocAtlas lets Ollama go online, and only when you press Pull.")
REMOTE_WARNING = ("This host is not this computer: the text of your documents and questions will be sent "
                  "to it. Use it only if you trust that machine and the network to it.")
HOSTS_HINT = "127.0.0.1:11434 — or several: gpu1:11434*3, 127.0.0.1:11434 (*N: its calls at once)"


def remote_warning(host: str) -> str:
    """The warning naming the hosts of `host` that are not this computer ("" when none is)."""
    remote = remote_hosts(host)
    if len(remote) <= 1 and "," not in host:
        return REMOTE_WARNING if remote else ""
    if not remote:
        return ""
    names = ", ".join(remote)
    return (f"Not this computer: {names}. The text of your documents and questions will be sent there; use "
            "them only if you trust those machines and the network to them.")


def host_line(probe: OllamaProbe) -> str:
    """One host of several, as the dialog lists it: "gpu1:11434 — another computer: reachable, 5 models"."""
    where = "another computer" if probe.remote else "this computer"
    if not probe.reachable:
        return f"{host_label(probe.host)} — {where}: not reachable"
    missing = f"; not installed: {', '.join(probe.missing)}" if probe.missing else ""
    return f"{host_label(probe.host)} — {where}: reachable, {len(probe.models)} models{missing}"


def model_label(model: ModelInfo) -> str:
    """"qwen2.5:7b — 4.7 GB, qwen2 7.6B"."""
    facts = ", ".join(x for x in (human_size(model.size), " ".join(
        y for y in (model.family, model.parameter_size) if y)) if x)
    return f"{model.name} — {facts}"
