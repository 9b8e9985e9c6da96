"""The bundle's ICU data without the parts Qt never reads (packaging/linux/icu_data.py): Qt still
sorts, converts and names time zones exactly as with the full data, and calls no other ICU
function than those bundle.QT_ICU_CALLS lists."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from packaging_helpers import PACKAGING

QT_LIB = None
try:
    import PySide6

    QT_LIB = Path(PySide6.__file__).resolve().parent / "Qt" / "lib"
except ImportError:  # pragma: no cover - PySide6 is a dependency
    pass

TOOLS = ("readelf", "icupkg", "cc", "nm")
needs_tools = pytest.mark.skipif(not all(shutil.which(tool) for tool in TOOLS) or not sys.platform.startswith("linux"),
                                 reason="needs Linux with binutils, icu-devtools (icupkg) and cc")

# What a person could meet of ICU in the window: sorting in several languages, text converters,
# time-zone names, locale case mapping; and which libicudata the process loaded.
PROBE = r"""
import functools, json
from PySide6.QtCore import QCollator, QLocale, QStringDecoder, QTimeZone
words = ["Zebra", "äpfel", "apple", "Österreich", "ostrich", "čaj", "cukr", "Ångström", "zoo", "ñandú", "nube",
         "10", "9"]
out = {}
for name in ("en_US", "de_DE", "sv_SE", "cs_CZ", "es_ES", "tr_TR", "ja_JP"):
    collator = QCollator(QLocale(name))
    collator.setNumericMode(True)
    out[name] = sorted(words, key=functools.cmp_to_key(collator.compare))
out["codecs"] = [QStringDecoder(name).isValid() for name in ("ISO-8859-2", "windows-1251", "Shift_JIS", "GB18030")]
out["codec count"] = len(QStringDecoder.availableCodecs())
zone = QTimeZone(b"Europe/Berlin")
out["zone"] = [zone.displayName(QTimeZone.TimeType.StandardTime, QTimeZone.NameType.LongName, QLocale(name))
               for name in ("de_DE", "en_US", "fr_FR")]
out["upper"] = QLocale("tr_TR").toUpper("istanbul")
out["loaded"] = sorted({line.split()[-1] for line in open("/proc/self/maps") if "libicudata" in line})
print(json.dumps(out, ensure_ascii=False))
"""


def probe(library_path: str | None = None) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    if library_path:
        env["LD_LIBRARY_PATH"] = library_path  # searched before the Qt libraries' RUNPATH
    result = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, timeout=60)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@needs_tools
def test_qt_reads_nothing_of_what_the_bundle_leaves_out(tmp_path):
    library = next(QT_LIB.glob("libicudata.so.*"))
    out = tmp_path / library.name
    result = subprocess.run([sys.executable, str(PACKAGING / "linux" / "icu_data.py"), str(library), "--out", str(out)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert out.stat().st_size < library.stat().st_size - 10 * 2**20  # the parts left out are about 15 MB
    full, cut = probe(), probe(str(tmp_path))
    assert cut["loaded"] == [str(out)] and full["loaded"] != cut["loaded"]  # the smaller data really was used
    full.pop("loaded"), cut.pop("loaded")
    assert cut == full
    assert full["sv_SE"][-3:] == ["Ångström", "äpfel", "Österreich"]  # Swedish order: the collation data is there
    assert all(full["codecs"]) and full["upper"] == "İSTANBUL"


@needs_tools
def test_qt_calls_only_the_icu_functions_the_filter_was_made_for(bundle):
    calls = set()
    for library in QT_LIB.glob("libQt6*.so.6"):
        symbols = subprocess.run(["nm", "-D", "--undefined-only", str(library)], capture_output=True, text=True).stdout
        calls |= {line.split()[-1].rsplit("_", 1)[0] for line in symbols.splitlines()
                  if line.split() and line.split()[-1].rsplit("_", 1)[-1].isdigit() and
                  line.split()[-1].lower().startswith(("u_", "ucnv", "ucol", "ucal", "ubrk", "uloc", "unum", "udat",
                                                       "utrans", "usprep", "uspoof", "uidna", "ucurr", "ures"))}
    assert calls, "no ICU call found in Qt's libraries"
    other = sorted(call for call in calls if not call.startswith(bundle.QT_ICU_CALLS))
    assert not other, f"Qt now calls {other}: look at bundle.ICU_DATA_DROPPED again"
