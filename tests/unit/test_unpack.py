"""A server archive root unpacks is read whole before a byte is written, and refused,
naming the member, for each attack of its kind: a hard link to a file outside followed by
a member of the same name (Python's filter="tar" rewrites that file), links out of the
folder, absolute and ``..`` paths, devices and FIFOs, a name written twice, and a small
archive that unpacks past the size budget. A vendor's plain layout (relative library
links inside) unpacks."""
from __future__ import annotations

import io
import os
import stat
import tarfile
import zipfile
from pathlib import Path

import pytest

from harness.errors import CatalogError
from harness.server import unpack


def _tar(path: Path, *members: tuple[tarfile.TarInfo, bytes | None]) -> Path:
    with tarfile.open(path, "w:gz") as t:
        for info, data in members:
            t.addfile(info, io.BytesIO(data) if data is not None else None)
    return path


def _file(name: str, data: bytes = b"x", mode: int = 0o644) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.size, info.mode = len(data), mode
    return info, data


def _link(name: str, target: str, kind: bytes = tarfile.SYMTYPE
          ) -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    return info, None


def _refused(archive: Path, into: Path, words: str) -> None:
    with pytest.raises(CatalogError) as e:
        unpack.unpack(archive, into)
    assert words in str(e.value) and "nothing was unpacked" in str(e.value), e.value
    assert not into.exists() or not any(into.iterdir())


def test_a_vendor_layout_with_its_library_links_unpacks(tmp_path):
    a = _tar(tmp_path / "mysql.tar.gz", _file("mysql-9.7/bin/mysqld", b"#!", 0o4755),
             _file("mysql-9.7/lib/libfoo.so.1", b"elf"),
             _link("mysql-9.7/lib/libfoo.so", "libfoo.so.1"),
             _link("mysql-9.7/lib/private/libfoo.so", "../libfoo.so.1"))
    unpack.unpack(a, tmp_path / "out")
    top = tmp_path / "out/mysql-9.7"
    assert (top / "lib/libfoo.so").read_bytes() == b"elf"
    assert os.readlink(top / "lib/libfoo.so") == "libfoo.so.1"
    mode = (top / "bin/mysqld").stat().st_mode
    assert mode & stat.S_IXUSR and not mode & stat.S_ISUID  # setuid dropped


def test_a_hard_link_then_a_member_of_its_name_never_reaches_the_file(tmp_path):
    """The attack on filter='tar': a hard link to a root-owned file, then a regular
    member of the same name, which would chmod, chown and overwrite that file."""
    victim = tmp_path / "root-owned"
    victim.write_text("root's\n")
    victim.chmod(0o600)
    a = _tar(tmp_path / "evil.tar.gz", _file("top/bin/mysqld"),
             _link("top/etc", str(victim), tarfile.LNKTYPE),
             _file("top/etc", b"pwned\n", 0o777))
    _refused(a, tmp_path / "out", "member 'top/etc': a hard link")
    assert victim.read_text() == "root's\n" and stat.S_IMODE(victim.stat().st_mode) == 0o600


@pytest.mark.parametrize("member, words", [
    (_link("top/lib/x", "/etc/shadow"), "a symbolic link that leaves the folder"),
    (_link("top/lib/x", "../../../etc"), "a symbolic link that leaves the folder"),
    (_file("/etc/cron.d/x"), "its path leaves the folder"),
    (_file("top/../../x"), "its path leaves the folder"),
])
def test_a_path_or_link_out_of_the_folder_is_refused(tmp_path, member, words):
    a = _tar(tmp_path / "evil.tar.gz", _file("top/bin/mysqld"), member)
    _refused(a, tmp_path / "out", words)


@pytest.mark.parametrize("kind, words", [(tarfile.CHRTYPE, "a device"),
                                         (tarfile.BLKTYPE, "a device"),
                                         (tarfile.FIFOTYPE, "a FIFO")])
def test_devices_and_fifos_are_refused(tmp_path, kind, words):
    info = tarfile.TarInfo("top/dev/sda")
    info.type, info.devmajor, info.devminor = kind, 8, 0
    a = _tar(tmp_path / "evil.tar.gz", _file("top/bin/mysqld"), (info, None))
    _refused(a, tmp_path / "out", words)


def test_a_name_written_twice_is_refused(tmp_path):
    a = _tar(tmp_path / "twice.tar.gz", _file("top/bin/mysqld", b"a"),
             _link("top/bin/x", "mysqld"), _file("top/bin/x", b"through the link"))
    _refused(a, tmp_path / "out", "a second member of that name")


def test_a_small_archive_that_unpacks_past_the_budget_is_refused_unwritten(tmp_path,
                                                                            monkeypatch):
    """Sizes are read from the headers: nothing is written, however far it would go."""
    zeros = b"\0" * (4 << 20)
    a = _tar(tmp_path / "bomb.tar.gz", *[_file(f"top/f{i}", zeros) for i in range(4)])
    assert a.stat().st_size < 200_000  # 16 MB of zeros, compressed
    monkeypatch.setattr(unpack, "MAX_TOTAL", 10 << 20)
    _refused(a, tmp_path / "out", "the archive unpacks to more than")
    monkeypatch.setattr(unpack, "MAX_FILE", 1 << 20)
    _refused(a, tmp_path / "out2", "over the")


def test_a_zip_member_out_of_the_folder_is_refused(tmp_path):
    a = tmp_path / "evil.jar"
    with zipfile.ZipFile(a, "w") as z:
        z.writestr("ch/bin/mysqld", b"x")
        z.writestr("../../outside", b"x")
    _refused(a, tmp_path / "out", "its path leaves the folder")
    assert not (tmp_path.parent / "outside").exists()


def test_a_chain_of_links_that_each_stay_inside_but_resolve_outside_is_refused(tmp_path):
    """``h/l -> up/../../..`` read alone stays inside; once ``h/up -> ../..`` is written
    after it, ``h/l`` resolves above the folder. filter="data" passes it; the walk after
    unpacking does not, and nothing unpacked is kept."""
    a = _tar(tmp_path / "chain.tar.gz", _file("top/bin/mysqld"),
             _link("top/h/l", "up/../.."), _link("top/h/up", "../.."))
    into = tmp_path / "deep/out"
    into.mkdir(parents=True)
    with pytest.raises(CatalogError) as e:
        unpack.unpack(a, into)
    assert "resolves outside the folder through other links" in str(e.value), e.value
    assert not any(into.iterdir())


def test_declared_outward_links_are_dropped_and_said_any_other_refused(tmp_path):
    a = _tar(tmp_path / "repacked.tar.gz", _file("bin/mysqld"),
             _link("bin/libx.so.3", "/tmp/repack.Xy/lib/private/libx.so.3"))
    said: list[str] = []
    unpack.unpack(a, tmp_path / "out", drop_links=["bin/libx.so.3"], say=said.append)
    assert (tmp_path / "out/bin/mysqld").is_file()
    assert not os.path.lexists(tmp_path / "out/bin/libx.so.3")
    assert len(said) == 1 and "dropped bin/libx.so.3" in said[0] and "/tmp/repack" in said[0]
    # the same link not declared is still refused
    _refused(a, tmp_path / "out2", "a symbolic link that leaves the folder")


def test_the_bytes_hashed_are_the_bytes_unpacked_whatever_is_renamed_over_the_name(
        tmp_path):
    """The swap between the hash and the unpack: once opened, a file renamed over the
    name changes nothing of what is read."""
    genuine = _tar(tmp_path / "mysql.tar.gz", _file("top/bin/mysqld", b"genuine"))
    evil = _tar(tmp_path / "evil.tar.gz", _file("top/bin/mysqld", b"#!/bin/sh\nid\n"))
    with unpack.Opened(genuine) as opened:
        digest = opened.sha256
        os.replace(evil, genuine)  # the attacker's rename, after the open
        unpack.unpack(opened, tmp_path / "out")
    assert (tmp_path / "out/top/bin/mysqld").read_bytes() == b"genuine"
    import hashlib
    assert digest != hashlib.sha256(genuine.read_bytes()).hexdigest()


def test_a_link_given_as_the_archive_is_not_followed(tmp_path):
    real = _tar(tmp_path / "real.tar.gz", _file("top/bin/mysqld"))
    (tmp_path / "link.tar.gz").symlink_to(real)
    with pytest.raises(CatalogError, match="cannot be opened as a plain file"):
        unpack.Opened(tmp_path / "link.tar.gz")


def test_a_nested_archive_is_held_to_its_own_pin_and_its_declared_links(tmp_path,
                                                                        monkeypatch):
    """A Maven jar carrying the build as a tarball (MySQL 8.0.31's): the jar pinned is not
    enough; the tarball inside must have its own pin, and only the links the catalog
    names are dropped."""
    import hashlib

    from harness.server import catalog
    monkeypatch.setenv("HARNESS_CACHE", str(tmp_path / "cache"))
    inner = _tar(tmp_path / "mysql-Linux-amd64.tar.gz", _file("bin/mysqld", b"x"),
                 _link("bin/libp.so.3", "/tmp/repack/lib/private/libp.so.3"))
    jar = tmp_path / "testing.jar"
    with zipfile.ZipFile(jar, "w") as z:
        z.write(inner, "mysql-Linux-amd64.tar.gz")
    digest = hashlib.sha256(jar.read_bytes()).hexdigest()
    inner_digest = hashlib.sha256(inner.read_bytes()).hexdigest()

    def install(nested: catalog.Nested) -> None:
        entry = catalog.CatalogEntry("mysql-8.0.99", "mysql", "8.0.99", "maven", "g:a:1",
                                     digest, nested=nested, strip={"bin": "bin"})
        catalog._install_locked(entry, catalog.Fetched(jar, digest, "file"), lambda _: None)

    with pytest.raises(CatalogError, match="checksum mismatch for mysql-Linux-amd64.tar.gz "
                       "inside testing.jar: got " + inner_digest):
        install(catalog.Nested("mysql-Linux-amd64.tar.gz", "0" * 64, ("bin/libp.so.3",)))
    with pytest.raises(CatalogError, match="a symbolic link that leaves the folder"):
        install(catalog.Nested("mysql-Linux-amd64.tar.gz", inner_digest))
    assert not (tmp_path / "cache/servers/mysql-8.0.99").exists()
