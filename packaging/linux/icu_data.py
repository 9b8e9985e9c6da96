"""Rebuild the bundle's ICU data library (PySide6's libicudata.so.NN, 30 MB) without the parts
Qt never reads; linux/build.sh runs it on the app folder.

Qt 6 calls ICU for text converters (ucnv_*), collation (ucol_*), time-zone names (ucal_*) and
case mapping (u_strToUpper/Lower); tests/packaging/test_icu_data.py checks that list against the
Qt libraries installed. Left out (bundle.ICU_DATA_DROPPED): word-break rules and dictionaries,
transliteration, number spell-out, unit, currency, language and region display names, Unicode
character names, StringPrep profiles and confusables: about 15 MB. The data is taken out of the
library (`readelf` finds its symbol), filtered with ICU's `icupkg`, and assembled into a library
of the same name and symbol with `cc` (`.incbin`); nothing else of ICU changes.

    python packaging/linux/icu_data.py LIBRARY            # rewrites LIBRARY in place
    python packaging/linux/icu_data.py LIBRARY --out FILE

Needs binutils (readelf), icu-devtools (icupkg) and a C compiler (cc).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import bundle

SYMBOL = re.compile(r"\b(icudt\d+_dat)$")


def data_symbol(library: Path) -> tuple[str, int, int]:
    """The data symbol's name, file offset and size in `library`."""
    symbols = subprocess.run(["readelf", "-Ws", "--dyn-syms", str(library)], capture_output=True, text=True,
                             check=True).stdout
    for line in symbols.splitlines():
        fields = line.split()
        if len(fields) >= 8 and SYMBOL.search(fields[-1]) and fields[6].isdigit():
            name, address, size, section = fields[-1], int(fields[1], 16), int(fields[2], 0), int(fields[6])
            break
    else:
        raise SystemExit(f"{library} has no icudtNN_dat symbol: not ICU's data library")
    sections = subprocess.run(["readelf", "-SW", str(library)], capture_output=True, text=True, check=True).stdout
    for line in sections.splitlines():
        match = re.match(r"\s*\[\s*(\d+)\]\s+\S+\s+\S+\s+([0-9a-f]+)\s+([0-9a-f]+)", line)
        if match and int(match.group(1)) == section:
            return name, address - int(match.group(2), 16) + int(match.group(3), 16), size
    raise SystemExit(f"{library}: section {section} of {name} not found")


def soname(library: Path) -> str:
    dynamic = subprocess.run(["readelf", "-d", str(library)], capture_output=True, text=True, check=True).stdout
    match = re.search(r"\(SONAME\).*\[(.+)\]", dynamic)
    return match.group(1) if match else library.name


def dropped(item: str) -> bool:
    """Whether an ICU data item ("brkitr/en.res", as icupkg lists it) is one Qt never reads."""
    path = item
    folder = path.split("/", 1)[0] if "/" in path else ""
    return folder in bundle.ICU_DATA_DROPPED or path.rsplit(".", 1)[-1] in bundle.ICU_DATA_DROPPED or \
        path in bundle.ICU_DATA_DROPPED


def rebuild(library: Path, out: Path) -> tuple[int, int]:
    """Write `out`: `library` with the dropped items left out of its data; (bytes before, after)."""
    name, offset, size = data_symbol(library)
    # icupkg takes the package's name (icudt73l) from the file's
    package = name.removesuffix("_dat") + ("l" if sys.byteorder == "little" else "b")
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        full, kept = work / "full" / f"{package}.dat", work / "kept" / f"{package}.dat"
        full.parent.mkdir()
        kept.parent.mkdir()
        with library.open("rb") as handle:
            handle.seek(offset)
            full.write_bytes(handle.read(size))
        items = subprocess.run(["icupkg", "-l", str(full)], capture_output=True, text=True, check=True).stdout.split()
        gone = [item for item in items if dropped(item)]
        (work / "gone.txt").write_text("\n".join(gone) + "\n", encoding="utf-8")
        subprocess.run(["icupkg", "-r", str(work / "gone.txt"), str(full), str(kept)], check=True,
                       capture_output=True)
        (work / "data.S").write_text(
            f'.section .rodata\n.globl {name}\n.type {name}, @object\n.balign 16\n{name}:\n'
            f'.incbin "{kept}"\n.size {name}, . - {name}\n'
            '.section .note.GNU-stack,"",@progbits\n', encoding="utf-8")
        subprocess.run(["cc", "-shared", "-nostdlib", f"-Wl,-soname,{soname(library)}", "-o", str(work / "lib.so"),
                        str(work / "data.S")], check=True)
        before = library.stat().st_size
        out.write_bytes((work / "lib.so").read_bytes())
        out.chmod(library.stat().st_mode & 0o777)
    return before, out.stat().st_size


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("library", type=Path, help="the bundle's libicudata.so.NN")
    parser.add_argument("--out", type=Path, help="write here instead of replacing LIBRARY")
    args = parser.parse_args(argv)
    before, after = rebuild(args.library, args.out or args.library)
    print(f"{args.library.name}: {before / 2**20:.1f} MB -> {after / 2**20:.1f} MB (parts Qt never reads left out)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
