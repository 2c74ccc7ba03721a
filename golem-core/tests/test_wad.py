"""The WAD directory reader rejects what would crash or hang the engine."""

from __future__ import annotations

import pytest

from golem.errors import GolemError
from golem.wad import build_wad, read_wad, read_wad_bytes, thing_types, validate_wad

CLASSIC = [
    ("THINGS", b"\0" * 10),
    ("LINEDEFS", b"\1" * 14),
    ("SIDEDEFS", b"\2" * 30),
    ("VERTEXES", b"\3" * 4),
    ("SEGS", b""),
    ("SSECTORS", b""),
    ("NODES", b""),
    ("SECTORS", b"\4" * 26),
    ("REJECT", b""),
    ("BLOCKMAP", b""),
]


def one_line(exc: pytest.ExceptionInfo) -> str:
    text = str(exc.value)
    assert "\n" not in text
    return text


def test_valid_classic_map():
    wad = read_wad_bytes(build_wad([("MAP01", b""), *CLASSIC, ("MAP02", b""), *CLASSIC], kind="IWAD"))
    assert wad.kind == "IWAD"
    assert wad.maps() == ["MAP01", "MAP02"]
    assert wad.validate_map("map02") == "classic"


def test_valid_udmf_map():
    wad = read_wad_bytes(
        build_wad([("E1M1", b""), ("TEXTMAP", b'namespace="zdoom";'), ("ZNODES", b"x"), ("ENDMAP", b"")])
    )
    assert wad.maps() == ["E1M1"]
    assert wad.validate_map("E1M1") == "udmf"


def test_empty_map_marker_is_an_error():
    wad = read_wad_bytes(build_wad([("MAP01", b""), ("MAP02", b""), *CLASSIC]))
    with pytest.raises(GolemError) as exc:
        wad.validate_map("MAP01")
    assert "empty" in one_line(exc)
    with pytest.raises(GolemError):
        read_wad_bytes(build_wad([("MAP01", b"")])).validate_map("MAP01")


def test_missing_map_lists_known_maps():
    with pytest.raises(GolemError) as exc:
        read_wad_bytes(build_wad([("MAP01", b""), *CLASSIC])).validate_map("MAP07")
    assert "MAP01" in one_line(exc)


def test_incomplete_classic_and_udmf():
    with pytest.raises(GolemError) as exc:
        read_wad_bytes(build_wad([("MAP01", b""), ("THINGS", b"x"), ("LINEDEFS", b"x")])).validate_map("MAP01")
    assert "SIDEDEFS" in one_line(exc)
    with pytest.raises(GolemError, match="ENDMAP"):
        read_wad_bytes(build_wad([("MAP01", b""), ("TEXTMAP", b"x")])).validate_map("MAP01")


def test_truncated_file():
    data = build_wad([("MAP01", b""), *CLASSIC])
    with pytest.raises(GolemError) as exc:
        read_wad_bytes(data[:-20])
    assert "truncated" in one_line(exc)
    with pytest.raises(GolemError):
        read_wad_bytes(data[:8])
    # a lump pointing past the end of the file
    bad = bytearray(data)
    directory = int.from_bytes(bad[8:12], "little")
    bad[directory + 16 + 4 : directory + 16 + 8] = (10**6).to_bytes(4, "little")
    with pytest.raises(GolemError, match="out of bounds"):
        read_wad_bytes(bytes(bad))


def test_bad_magic():
    data = b"JUNK" + build_wad([("MAP01", b""), *CLASSIC])[4:]
    with pytest.raises(GolemError) as exc:
        read_wad_bytes(data)
    assert "magic" in one_line(exc)


def test_files(tmp_path):
    path = tmp_path / "m.wad"
    path.write_bytes(build_wad([("MAP01", b""), *CLASSIC]))
    assert validate_wad(path, "MAP01").maps() == ["MAP01"]
    with pytest.raises(GolemError, match="not found"):
        read_wad(tmp_path / "missing.wad")


def test_shipped_scenarios_are_valid():
    import vizdoom

    from golem.scenarios import known_scenarios, resolve_scenario

    names = known_scenarios()
    assert {"basic", "deathmatch", "my_way_home", "take_cover"} <= set(names)
    for name in names:
        resolve_scenario(name)
    assert read_wad(f"{vizdoom.scenarios_path}/basic.wad").validate_map("MAP01") == "udmf"


def test_thing_types_of_classic_hexen_and_udmf_maps(tmp_path):
    """A deathmatch needs deathmatch starts (thing 11); the reader finds them in every map format."""
    import struct

    import vizdoom

    doom = b"".join(struct.pack("<hhhhh", 0, 0, 0, kind, 7) for kind in (1, 11, 11))
    hexen = b"".join(struct.pack("<hhhhhhhB5B", 0, 0, 0, 0, 0, kind, 7, 0, 0, 0, 0, 0, 0) for kind in (1, 11))
    classic = tmp_path / "classic.wad"
    classic.write_bytes(build_wad([("MAP01", b""), ("THINGS", doom), *CLASSIC[1:]]))
    assert thing_types(classic, "MAP01") == [1, 11, 11]
    hexen_wad = tmp_path / "hexen.wad"
    hexen_wad.write_bytes(build_wad([("MAP01", b""), ("THINGS", hexen), *CLASSIC[1:], ("BEHAVIOR", b"ACS\0")]))
    assert thing_types(hexen_wad, "MAP01") == [1, 11]
    udmf = tmp_path / "udmf.wad"
    text = b'namespace="zdoom"; thing // 0\n{ x = 1.0; type = 11; }\nthing { type=1; y = 2.0; }'
    udmf.write_bytes(build_wad([("MAP01", b""), ("TEXTMAP", text), ("ENDMAP", b"")]))
    assert thing_types(udmf, "MAP01") == [11, 1]
    shipped = vizdoom.scenarios_path
    assert thing_types(f"{shipped}/cig.wad", "MAP01").count(11) == 25
    assert 11 not in thing_types(f"{shipped}/deathmatch.wad", "MAP01")  # a single-player map with three starts
    with pytest.raises(GolemError, match="not found"):
        thing_types(classic, "MAP02")
