"""Build the Linux package, unpack it into a temporary root, and start what is inside.

    python packaging/linux/smoke_test.py              # build (packaging/linux/build.sh), then test
    python packaging/linux/smoke_test.py --no-build   # test build/packaging/docatlas_*.deb as it is

Checks, in order, and stops at the first failure (exit 1):
  1. the .deb unpacks (dpkg-deb -x) with /usr/bin/docatlas, the .desktop entry (desktop-file-validate
     when installed), the icons at every size, the tiktoken data, the prompts and the licence notices;
  2. every library the bundle loads is found (ldd) on this machine;
  3. `docatlas --version` prints the version from docatlas/__init__.py, and so does the app
     unpacked from the .tar.gz;
  4. `docatlas ingest` of three small documents against a scripted Ollama on 127.0.0.1: the frozen
     app tokenises with the bundled cl100k_base file and reads the bundled prompts;
  2b. no OpenCV (cv2, its libraries), rapidocr, shapely or pyclipper, and no libQt5 file in the bundle;
  4b. `docatlas ingest` of a scanned page (known text rendered with Pillow, as an image-only PDF):
     the frozen app OCRs it with the bundled models, offline, and the graph has the names on it;
     then `docatlas query` answers a question from the scanned sentence (the test server's reader
     finds it in the prompt's material), and ONNX Runtime left no telemetry in the home folder;
  5. a first start of the window, offscreen, in an empty home: it paints, creates its data, config
     and log folders private (0700), and closes by itself (DOCATLAS_QUIT_AFTER_MS);
  6. the same in a real X server (Xvfb), with a screenshot;
  and, when strace is installed, that no run connects anywhere but the Ollama host (or local sockets).
As root it apt-installs Xvfb and strace when missing (DOCATLAS_NO_APT=1 stops that).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("DOCATLAS_BUILD_DIR", ROOT / "build" / "packaging"))
sys.path[:0] = [str(ROOT / "bench"), str(ROOT / "tests"), str(ROOT / "packaging"), str(ROOT / "desktop")]

import bundle  # noqa: E402
import cold_start  # noqa: E402

SIZES = bundle.ICON_SIZES
PORT = re.compile(r"sin6?_port=htons\((\d+)\)")
ADDRESS = re.compile(r"inet_addr\(\"([^\"]+)\"\)|inet_pton\(AF_INET6, \"([^\"]+)\"")


class Failed(Exception):
    """A check that did not pass."""


def step(text: str) -> None:
    print(f"--- {text}", flush=True)


def check(condition: bool, message: str) -> None:
    if not condition:
        raise Failed(message)


def apt_install(*packages: str) -> None:
    """Install Debian packages that are missing, when allowed (root, DOCATLAS_NO_APT unset)."""
    missing = [p for p in packages if subprocess.run(["dpkg", "-s", p], capture_output=True).returncode != 0]
    if not missing or os.environ.get("DOCATLAS_NO_APT") or os.geteuid() != 0 or not shutil.which("apt-get"):
        return
    print(f"installing {' '.join(missing)}", flush=True)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update", "-qq"], env=env, check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["apt-get", "install", "-y", "-qq", *missing], env=env, check=True, stdout=subprocess.DEVNULL)


def png_size(path: Path) -> tuple[int, int]:
    """Width and height from a PNG's header."""
    data = path.read_bytes()[:24]
    check(data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG")
    return struct.unpack(">II", data[16:24])


def build() -> Path:
    """Run build.sh; the .deb it wrote."""
    step("building (packaging/linux/build.sh)")
    started = time.time()
    result = subprocess.run(["bash", str(ROOT / "packaging" / "linux" / "build.sh")], stdout=subprocess.PIPE,
                            text=True, check=False)
    check(result.returncode == 0, f"build.sh failed (exit {result.returncode})")
    deb = Path(result.stdout.strip().splitlines()[-1])
    print(f"built in {time.time() - started:.0f} s: {deb}")
    return deb


def unpack(deb: Path, root: Path) -> Path:
    """dpkg-deb -x into `root`; checks the files every install needs; returns the app's executable."""
    step(f"unpacking {deb.name} into {root}")
    subprocess.run(["dpkg-deb", "-x", str(deb), str(root)], check=True)
    fields = subprocess.run(["dpkg-deb", "-f", str(deb), "Package", "Version", "Depends"], capture_output=True,
                            text=True, check=True).stdout
    check(f"Version: {bundle.version()}" in fields, f"the .deb's version is not {bundle.version()}:\n{fields}")
    link = root / "usr" / "bin" / "docatlas"
    check(link.is_symlink() and os.readlink(link) == "/opt/docatlas/docatlas",
          "/usr/bin/docatlas is not a link to /opt/docatlas/docatlas")
    exe = root / "opt" / "docatlas" / "docatlas"
    check(exe.is_file() and os.access(exe, os.X_OK), f"{exe} is missing or not executable")
    desktop = root / "usr" / "share" / "applications" / "docatlas.desktop"
    check(desktop.is_file(), "the .desktop entry is missing")
    text = desktop.read_text(encoding="utf-8")
    check("Exec=docatlas\n" in text and "Icon=docatlas\n" in text, "the .desktop entry does not start docatlas")
    if shutil.which("desktop-file-validate"):
        result = subprocess.run(["desktop-file-validate", str(desktop)], capture_output=True, text=True)
        check(result.returncode == 0, f"desktop-file-validate: {result.stdout}{result.stderr}")
    else:
        print("desktop-file-validate is not installed; the .desktop entry's keys were checked only")
    icons = root / "usr" / "share" / "icons" / "hicolor"
    for size in SIZES:
        png = icons / f"{size}x{size}" / "apps" / "docatlas.png"
        check(png.is_file() and png_size(png) == (size, size), f"icon {png} is missing or not {size}x{size}")
    check((icons / "scalable" / "apps" / "docatlas.svg").is_file(), "the scalable icon is missing")
    internal = root / "opt" / "docatlas" / "_internal"
    for needed in ("tiktoken_ext/data/cl100k_base.tiktoken", "docatlas/resources/prompts/lightrag/extract.txt",
                   "docatlas/resources/prompts/query/answer.txt", "docatlas/resources/icons/docatlas-512.png",
                   "THIRD-PARTY-NOTICES.txt", "licenses/LGPL-3.0.txt", "licenses/GPL-3.0.txt"):
        check((internal / needed).is_file(), f"the bundle has no {needed}")
    check((root / "usr" / "share" / "doc" / "docatlas" / "copyright").is_file(), "no copyright file")
    print(f"files in place; Depends: {fields.split('Depends: ', 1)[-1].strip()[:150]}...")
    return exe


def check_libraries(app: Path) -> None:
    """Every ELF file in the bundle finds all the libraries it loads, with the library path the
    app's bootloader sets (its _internal folder: a wheel's library without an RPATH, such as
    igraph's libxml2, finds its neighbour's copy there)."""
    step("ldd: every library the bundle loads is found")
    missing: dict[str, set[str]] = {}
    count = 0
    env = {**os.environ, "LD_LIBRARY_PATH": str(app / "_internal")}
    for path in app.rglob("*"):
        if path.is_symlink() or not path.is_file() or not (path.suffix == ".so" or ".so." in path.name
                                                          or path == app / "docatlas"):
            continue
        with path.open("rb") as handle:
            if handle.read(4) != b"\x7fELF":
                continue
        count += 1
        result = subprocess.run(["ldd", str(path)], capture_output=True, text=True, env=env)
        for line in result.stdout.splitlines():
            if "not found" in line:
                missing.setdefault(line.split()[0], set()).add(str(path.relative_to(app)))
    check(not missing, "libraries not found: " + "; ".join(f"{k} (for {sorted(v)[0]})" for k, v in missing.items()))
    print(f"{count} ELF files, every library found")


def check_tarball(work: Path) -> None:
    """The .tar.gz holds docatlas-VERSION/ with the same app, which starts from wherever it is unpacked."""
    tarballs = sorted(BUILD.glob(f"docatlas-{bundle.version()}-linux-*.tar.gz"))
    check(bool(tarballs), f"no .tar.gz in {BUILD}")
    step(f"unpacking {tarballs[-1].name}")
    (work / "tar").mkdir()
    subprocess.run(["tar", "-xzf", str(tarballs[-1]), "-C", str(work / "tar")], check=True)
    check([p.name for p in (work / "tar").iterdir()] == [f"docatlas-{bundle.version()}"],
          "the .tar.gz does not hold exactly one folder docatlas-VERSION")
    check_version(work / "tar" / f"docatlas-{bundle.version()}" / "docatlas", quiet=True)
    print("unpacked elsewhere, it starts: --version answers")


def check_version(exe: Path, quiet: bool = False) -> None:
    if not quiet:
        step("docatlas --version")
    result = subprocess.run([str(exe), "--version"], capture_output=True, text=True, timeout=60)
    expected = f"DocAtlas {bundle.version()}"
    check(result.returncode == 0 and result.stdout.strip() == expected,
          f"--version printed {result.stdout!r} {result.stderr!r} (exit {result.returncode}), not {expected!r}")
    if not quiet:
        print(result.stdout.strip())


def strace_wrapper(out: Path) -> list[str]:
    """strace recording every connect() of the process and its threads; [] without strace."""
    return ["strace", "-f", "-qq", "-e", "trace=connect", "-o", str(out)] if shutil.which("strace") else []


def connections(trace: Path) -> tuple[list[tuple[str, int]], int]:
    """The (address, port) of every internet-socket connect() in an strace log, and how many
    local (AF_UNIX) connects there were."""
    inet, unix = [], 0
    for line in trace.read_text(encoding="utf-8", errors="replace").splitlines():
        if "connect(" not in line:
            continue
        if "sa_family=AF_UNIX" in line:
            unix += 1
        elif "sa_family=AF_INET" in line:
            port, address = PORT.search(line), ADDRESS.search(line)
            check(port is not None and address is not None, f"cannot read this connect() in {trace}: {line}")
            inet.append((address.group(1) or address.group(2), int(port.group(1))))
        elif "sa_family=" in line and "AF_UNSPEC" not in line and "AF_NETLINK" not in line:
            raise Failed(f"an unexpected kind of connection in {trace}: {line}")
    return inet, unix


def check_connections(trace: Path, allowed_port: int, what: str, *, expect: bool) -> None:
    """Every internet-socket connect() in `trace` went to 127.0.0.1:`allowed_port` (and, when
    `expect`, there was at least one: the trace really saw the connections)."""
    if not trace.exists():
        return
    inet, unix = connections(trace)
    stray = sorted({f"{a}:{p}" for a, p in inet if not (a in ("127.0.0.1", "::1") and p == allowed_port)})
    check(not stray, f"{what} connected to {stray}, not only to the Ollama host")
    check(bool(inet) or not expect, f"strace saw no connection to the Ollama host during {what}")
    print(f"network ({what}, strace): {len(inet)} connection(s), all to the Ollama host 127.0.0.1:{allowed_port}; "
          f"{unix} local socket(s) (X server, D-Bus)")


def check_ingest(exe: Path, work: Path) -> None:
    """A real extraction with the frozen app against a scripted Ollama on 127.0.0.1."""
    step("docatlas ingest against a scripted Ollama (bundled tokenizer data and prompts)")
    from core.helpers import write_corpus
    from fixtures.ollama_fixture import default_models
    from fixtures.ollama_server import FakeOllama
    from fixtures.scripted_model import scripted_responder

    corpus = write_corpus(work / "corpus")
    server = FakeOllama(default_models())
    server.responder = scripted_responder
    server.start()
    trace = work / "ingest.strace"
    try:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(work / "home"), "LANG": "C.UTF-8",
               "OLLAMA_HOST": server.host}
        result = subprocess.run([*strace_wrapper(trace), str(exe), "--data-dir", str(work / "ws"), "ingest",
                                 str(corpus), "--model", "qwen2.5:7b"], env=env, capture_output=True, text=True,
                                timeout=300)
        check(result.returncode == 0, f"ingest failed (exit {result.returncode}): {result.stdout}{result.stderr}")
        check("3 documents" in result.stdout, f"ingest did not read the 3 documents: {result.stdout}")
        chats = [r for r in server.requests if r["path"] == "/api/chat"]
        check(bool(chats), "ingest never asked the model")
        print(result.stdout.strip())
        check_connections(trace, server.port, "ingest", expect=True)
    finally:
        server.stop()


def check_no_opencv(app: Path) -> None:
    """The bundle holds no OpenCV (OCR runs its models itself) and no second Qt: no cv2 folder,
    no OpenCV libraries, none of rapidocr and what it brings, no Qt 5 library anywhere."""
    step("no OpenCV, no rapidocr, no second Qt")
    internal = app / "_internal"
    found = sorted(p.name for p in internal.iterdir() if p.name.split(".")[0].split("-")[0].lower() in
                   {*bundle.NEVER_BUNDLED, "opencv_python_headless", "opencv_python", "shapely"})
    check(not found, f"the bundle has what OCR no longer uses: {found}")
    qt5 = sorted(str(p.relative_to(app)) for p in app.rglob("libQt5*"))
    check(not qt5, f"the bundle has Qt 5 libraries: {qt5[:5]}")
    print(f"no {', '.join(bundle.NEVER_BUNDLED)}, no OpenCV libraries, no libQt5*")


def check_ocr(exe: Path, work: Path) -> None:
    """The frozen app OCRs a scanned page with its bundled models, answers a question from what it
    read, connects only to Ollama, and leaves no ONNX Runtime telemetry in the home folder."""
    step("docatlas ingest of a scanned PDF page (bundled OCR models, offline), then a question")
    import json

    from fixtures.fact_model import fact_responder
    from fixtures.make_scans import make_scan_pdf
    from fixtures.ollama_fixture import default_models
    from fixtures.ollama_server import FakeOllama

    scan = make_scan_pdf(work / "scan.pdf", [["Meridian Foundation funded Anna Kovacs."]])
    server = FakeOllama(default_models())
    server.responder = fact_responder  # reads the answer from the material the question's prompt holds
    server.start()
    home = work / "home-ocr"
    try:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LANG": "C.UTF-8",
               "OLLAMA_HOST": server.host}
        data = ["--data-dir", str(work / "ws-ocr")]
        result = subprocess.run([*strace_wrapper(work / "ocr.strace"), str(exe), *data, "ingest", str(scan),
                                 "--model", "qwen2.5:7b"], env=env, capture_output=True, text=True, timeout=300)
        check(result.returncode == 0, f"ingest of a scan failed (exit {result.returncode}): "
                                      f"{result.stdout}{result.stderr}")
        check("onnxruntime" not in (result.stdout + result.stderr).lower(),
              f"ONNX Runtime wrote to the terminal: {result.stderr}")
        status = subprocess.run([str(exe), *data, "status", "--json"], env=env, capture_output=True, text=True,
                                timeout=60)
        (document,) = json.loads(status.stdout)["documents"]
        check(bool(document["ocr"]) and document["ocr"]["confidence"] > 0.8, f"no OCR confidence: {document}")
        graph = subprocess.run([str(exe), *data, "export", "--format", "json", "-"], env=env, capture_output=True,
                               text=True, timeout=60)
        names = {e["name"] for e in json.loads(graph.stdout)["entities"]}
        check({"Meridian Foundation", "Anna Kovacs"} <= names, f"OCR'd names missing from the graph: {names}")
        print(f"OCR: 1 page, confidence {document['ocr']['confidence']:.2f}; entities {sorted(names)}")
        check_connections(work / "ocr.strace", server.port, "OCR ingest", expect=True)

        question = "Whom did Meridian Foundation fund?"
        asked = subprocess.run([*strace_wrapper(work / "query.strace"), str(exe), *data, "query", question,
                                "--json"], env=env, capture_output=True, text=True, timeout=300)
        check(asked.returncode == 0, f"query failed (exit {asked.returncode}): {asked.stdout}{asked.stderr}")
        answer = json.loads(asked.stdout)["answer"]
        check("Anna Kovacs" in answer, f"the answer does not come from the scanned page: {answer!r}")
        print(f"query {question!r}: {answer}")
        check_connections(work / "query.strace", server.port, "query", expect=True)
        telemetry = home / ".cache" / "Microsoft"
        check(not telemetry.exists(), f"ONNX Runtime left telemetry in the home folder: {telemetry}")
        print("no ONNX Runtime telemetry in the home folder")
    finally:
        server.stop()


def check_window(exe: Path, platform: str, work: Path, display: str | None = None,
                 screenshot: tuple[Path, Path] | None = None) -> cold_start.Run:
    """A first start of the window in an empty home; it must paint, make private folders and close by itself."""
    step(f"first start of the window ({platform})")
    home = work / f"home-{platform}"
    trace = work / f"window-{platform}.strace"
    quit_after = 3000
    shooter = None
    if screenshot is not None:  # Xvfb's framebuffer file, read while the window is open
        shooter = threading.Timer(4.5, lambda: shutil.copyfile(screenshot[0], screenshot[1]))
        shooter.start()
    run = cold_start.run_gui([str(exe)], platform, quit_after_ms=quit_after, display=display,
                             wrapper=strace_wrapper(trace), keep_home=home, timeout_s=120)
    if shooter is not None:
        shooter.join()
    check(run.returncode == 0, f"the window exited with {run.returncode}:\n{run.log}")
    check(run.paint_s is not None, f"the window never painted:\n{run.log}")
    check("window opened on" in run.log, f"no workspace was opened:\n{run.log}")
    folders = {"data": home / ".local" / "share" / "DocAtlas", "config": home / ".config" / "DocAtlas",
               "log": home / ".local" / "state" / "DocAtlas" / "log"}
    for name, folder in folders.items():
        check(folder.is_dir(), f"the {name} folder {folder} was not created")
        mode = folder.stat().st_mode & 0o777
        check(mode == 0o700, f"the {name} folder {folder} is {oct(mode)}, not private (0o700)")
    check((folders["data"] / "docatlas.sqlite").is_file(), "the first start made no workspace database")
    print(f"painted {run.paint_s:.2f} s after start" + (" (under strace, slower)" if trace.exists() else "")
          + ", closed by itself, exit 0")
    print(f"folders created private (0700): {', '.join(str(f.relative_to(home)) for f in folders.values())}")
    check_connections(trace, run.ollama_port, f"window, {platform}", expect=True)
    return run


def largest_parts(internal: Path, count: int = 10) -> list[tuple[int, str]]:
    """The `count` largest entries of the bundle's _internal folder (a folder counts as a whole)."""
    sizes = [(cold_start.folder_size(p) if p.is_dir() else p.stat().st_size, p.name)
             for p in internal.iterdir() if not p.is_symlink()]
    return sorted(sizes, reverse=True)[:count]


def xwd_to_png(source: Path, target: Path) -> bool:
    """Convert Xvfb's framebuffer file (XWD, 32 bits per pixel) to PNG with Qt; False if it cannot."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtGui import QGuiApplication, QImage

    data = source.read_bytes()
    header = struct.unpack(">25I", data[:100])
    header_size, width, height, bits_per_pixel, bytes_per_line, colours = (
        header[0], header[4], header[5], header[11], header[12], header[19])
    if bits_per_pixel != 32:
        return False
    start = header_size + 12 * colours
    app = QGuiApplication.instance() or QGuiApplication([])
    image = QImage(data[start:start + bytes_per_line * height], width, height, bytes_per_line,
                   QImage.Format.Format_RGB32)
    ok = image.copy().save(str(target))
    del app
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--no-build", action="store_true", help="test the .deb already in build/packaging")
    parser.add_argument("--keep", action="store_true", help="keep the temporary root and homes")
    args = parser.parse_args(argv)
    apt_install("xvfb", "xauth", "strace", "desktop-file-utils")
    work = Path(tempfile.mkdtemp(prefix="docatlas-smoke-"))
    started = time.time()
    try:
        if args.no_build:
            debs = sorted(BUILD.glob(f"docatlas_{bundle.version()}_*.deb"))
            check(bool(debs), f"no .deb in {BUILD}; run without --no-build")
            deb = debs[-1]
        else:
            deb = build()
        exe = unpack(deb, work / "root")
        check_libraries(exe.parent)
        check_no_opencv(exe.parent)
        check_version(exe)
        check_tarball(work)
        check_ingest(exe, work)
        check_ocr(exe, work)
        offscreen = check_window(exe, "offscreen", work)
        xvfb = None
        if shutil.which("Xvfb"):
            fbdir = work / "fb"
            fbdir.mkdir()
            server, display = cold_start.start_xvfb("-fbdir", str(fbdir))  # the screen, as a file
            try:
                shot = BUILD / "smoke" / "window-xvfb.xwd"
                shot.parent.mkdir(parents=True, exist_ok=True)
                xvfb = check_window(exe, "xvfb", work, display, screenshot=(fbdir / "Xvfb_screen0", shot))
            finally:
                server.terminate()
                server.wait()
            if shot.exists() and xwd_to_png(shot, shot.with_suffix(".png")):
                shot.unlink()
                print(f"screenshot: {shot.with_suffix('.png')}")
        else:
            print("Xvfb is not installed: the window was started offscreen only")

        step("summary")
        app_mb = cold_start.folder_size(exe.parent) / 2**20
        print("the ten largest parts of the app folder:")
        for size, name in largest_parts(exe.parent / "_internal"):
            print(f"  {size / 2**20:6.1f} MB  {name}")
        tarballs = sorted(BUILD.glob(f"docatlas-{bundle.version()}-linux-*.tar.gz"))
        print(f"app folder {app_mb:.0f} MB; .deb {deb.stat().st_size / 2**20:.0f} MB"
              + (f"; .tar.gz {tarballs[-1].stat().st_size / 2**20:.0f} MB" if tarballs else ""))
        print(f"first paint (one start each, under strace when installed): offscreen {offscreen.paint_s:.2f} s"
              + (f", Xvfb {xvfb.paint_s:.2f} s" if xvfb else "") + "; bench/cold_start.py measures without strace")
        print(f"smoke test passed in {time.time() - started:.0f} s")
        return 0
    except Failed as exc:
        print(f"SMOKE TEST FAILED: {exc}", file=sys.stderr)
        return 1
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
