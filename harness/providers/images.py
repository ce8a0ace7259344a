"""Container images of catalog builds, made on this host without a registry.

``harness images build`` (``make docker-images``) turns a catalog build into a local
image: a Debian minbase root filesystem (debootstrap, made once and cached), the build
copied to ``/opt/mysql-harness/<server>``, the shared libraries its programs load on this
host, all given to ``docker import``. Nothing is pulled.

Every image declares, in labels, how a server is made from it: the command that creates
a datadir and the command that starts mysqld (``org.mysql-harness.init`` and
``org.mysql-harness.start``, JSON argv with ``{datadir}``, ``{tmpdir}`` and ``{config}``
placeholders), its basedir and error-message directory, and its environment. The Docker
provider reads only that declaration, so it has no case per image. The official images
(``mysql:5.7``, ``percona:5.6``, ...) that labs can pull carry no such labels; their
declarations are in :data:`OFFICIAL`.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .. import locks, proc
from ..errors import ProviderError
from ..paths import cache_dir
from ..server import catalog, debroot

LABEL = "org.mysql-harness"
REPOSITORY = "mysql-harness"
IMAGE_ROOT = Path("/opt/mysql-harness")
SUITE = "bookworm"
# What ``harness images build`` (make docker-images) builds without --server.
DEFAULT_IMAGES = ("mariadb-10.11", "mysql-5.7.29")


@dataclass(frozen=True)
class ImageSpec:
    """How the Docker provider makes a server from an image."""

    image: str
    server: str
    flavor: str
    version: str
    basedir: str
    lc_messages_dir: str
    init: list[str]  # {datadir} {tmpdir}
    start: list[str]  # {config}
    env: dict[str, str] = field(default_factory=dict)

    def labels(self) -> dict[str, str]:
        return {f"{LABEL}.server": self.server, f"{LABEL}.flavor": self.flavor,
                f"{LABEL}.version": self.version, f"{LABEL}.basedir": self.basedir,
                f"{LABEL}.lc-messages-dir": self.lc_messages_dir,
                f"{LABEL}.init": json.dumps(self.init), f"{LABEL}.start": json.dumps(self.start),
                f"{LABEL}.env": json.dumps(self.env)}

    @classmethod
    def from_labels(cls, image: str, labels: Mapping[str, str]) -> ImageSpec:
        try:
            return cls(image=image, server=labels[f"{LABEL}.server"],
                       flavor=labels[f"{LABEL}.flavor"], version=labels[f"{LABEL}.version"],
                       basedir=labels[f"{LABEL}.basedir"],
                       lc_messages_dir=labels[f"{LABEL}.lc-messages-dir"],
                       init=json.loads(labels[f"{LABEL}.init"]),
                       start=json.loads(labels[f"{LABEL}.start"]),
                       env=json.loads(labels.get(f"{LABEL}.env", "{}")))
        except (KeyError, ValueError) as e:
            raise ProviderError(f"image {image}: its {LABEL}.* labels do not say how to "
                                f"initialise and start it ({e}); rebuild it with "
                                "'harness images build'") from None


def image_name(server: str) -> str:
    return f"{REPOSITORY}/{server}:latest"


def _official(image: str, flavor: str, version: str) -> ImageSpec:
    """The declaration of an official image (mysqld on the PATH, datadir initialised by
    the version's own method)."""
    if catalog.version_tuple(version) >= (5, 7):
        init = ["mysqld", "--no-defaults", "--initialize-insecure", "--datadir={datadir}",
                "--tmpdir={tmpdir}"]
    else:
        init = ["mysql_install_db", "--no-defaults", "--datadir={datadir}", "--basedir=/usr"]
    return ImageSpec(image=image, server=image.replace(":", "-"), flavor=flavor,
                     version=version, basedir="/usr",
                     lc_messages_dir="/usr/share/mysql", init=init,
                     start=["mysqld", "--defaults-file={config}"])


# Official images, for labs that can pull them (`docker pull mysql:5.6`): the catalog
# server name they stand for, and how to use them. Nothing here pulls them.
OFFICIAL: dict[str, ImageSpec] = {
    name: _official(image, flavor, version) for name, image, flavor, version in [
        ("mysql-5.5.62", "mysql:5.5", "mysql", "5.5"),
        ("mysql-5.6.51", "mysql:5.6", "mysql", "5.6"),
        ("mysql-5.7.44", "mysql:5.7", "mysql", "5.7"),
        ("percona-5.5.62", "percona:5.5", "percona", "5.5"),
        ("percona-5.6.51", "percona:5.6", "percona", "5.6"),
        ("percona-5.7.44", "percona:5.7", "percona", "5.7"),
    ]}


def spec_for_build(build: catalog.Build, image: str) -> ImageSpec:
    """The declaration of a catalog build copied to ``IMAGE_ROOT/<name>``."""
    inside = build.relocated(IMAGE_ROOT / build.name)
    env = {"LD_LIBRARY_PATH": str(inside.lib_dir)} if inside.lib_dir else {}
    return ImageSpec(image=image, server=build.name, flavor=build.flavor,
                     version=build.version, basedir=str(inside.root),
                     lc_messages_dir=str(inside.share_dir),
                     init=inside.init_argv("{datadir}", "{tmpdir}", user=None),
                     start=[str(inside.mysqld), "--defaults-file={config}"], env=env)


# --- building ---------------------------------------------------------------------------

def base_rootfs(log: Callable[[str], None] = print) -> Path:
    """A Debian minbase root filesystem, made once with debootstrap and cached."""
    root = cache_dir() / "docker" / f"rootfs-{SUITE}"
    if (root / ".complete").exists():
        return root
    with locks.held(locks.cache_lock(f"docker-rootfs-{SUITE}"), "making the image base",
                    say=log):
        if not (root / ".complete").exists():
            _make_rootfs(root, log)
    return root


def _make_rootfs(root: Path, log: Callable[[str], None]) -> None:
    tmp = root.with_name(root.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.parent.mkdir(parents=True, exist_ok=True)
    debroot.debootstrap(SUITE, tmp, log=lambda m: log(f"images: {m} (once)"))
    (tmp / ".complete").write_text(SUITE + "\n")
    shutil.rmtree(root, ignore_errors=True)
    tmp.rename(root)


def shared_libraries(build: catalog.Build) -> set[Path]:
    """The host's shared libraries that the build's programs load (ldd of every ELF
    file in it, with its own lib/ first), each with the symlinks that lead to it."""
    libs: set[Path] = set()
    env = {**os.environ, **build.env()}
    for f in sorted(build.root.rglob("*")):
        real = f.resolve()
        if not real.is_file() or not debroot.is_elf(real):
            continue
        out = proc.run(["ldd", str(real)], env=env, timeout=60, check=False,
                       what=f"ldd {real}").stdout
        for line in out.splitlines():
            parts = line.split()
            path = parts[2] if len(parts) >= 3 and parts[1] == "=>" else parts[0]
            if path.startswith("/") and Path(path).exists():
                p = Path(path)
                if build.lib_dir and p.resolve().is_relative_to(build.lib_dir.resolve()):
                    continue
                libs.add(p)
                libs.add(p.resolve())
    return libs


def build_image(server: str, log: Callable[[str], None] = print) -> ImageSpec:
    """Build (or rebuild) the local image of catalog server ``server``, one process at a
    time."""
    build = catalog.resolve(server, log=log)
    base = base_rootfs(log)
    image = image_name(server)
    with locks.held(locks.cache_lock(f"image-{server}"), f"building image {image}", say=log):
        return _build(server, build, base, image, log)


def _build(server: str, build: catalog.Build, base: Path, image: str,
           log: Callable[[str], None]) -> ImageSpec:
    from .dockerd import client

    spec = spec_for_build(build, image)
    with tempfile.TemporaryDirectory(prefix="image-", dir=cache_dir() / "docker") as tmp:
        stage = Path(tmp) / "stage"
        dest = stage / IMAGE_ROOT.relative_to("/") / build.name
        dest.parent.mkdir(parents=True)
        # -L: the Debian build's bin/ and share/ are symlinks into /usr; a build with its
        # own root keeps its links (they stay inside it) and loads none of this host's
        # libraries.
        shutil.copytree(build.root, dest, symlinks=build.own_root,
                        ignore=debroot.regular_only)
        libs = set() if build.own_root else shared_libraries(build)
        for lib in sorted(libs):
            # By its directory's real path: /lib is a symlink to usr/lib in both trees.
            rel = (lib.parent.resolve() / lib.name).relative_to("/")
            target = stage / rel
            if (base / rel).exists() and not lib.is_symlink() and \
                    (base / rel).stat().st_size == lib.stat().st_size:
                continue  # the same file is in the Debian base already
            target.parent.mkdir(parents=True, exist_ok=True)
            if lib.is_symlink():
                if not target.exists():
                    target.symlink_to(os.readlink(lib))
            else:
                shutil.copy2(lib, target)
        # The image's tree: the base hard-linked (no copy), the build and libraries
        # over it; --remove-destination unlinks a base file before replacing it, so
        # the cached base is never written through a link.
        tree = Path(tmp) / "tree"
        proc.run(["cp", "-a", "--link", f"{base}/.", str(tree)], timeout=600,
                 what="cp of the base root filesystem")
        (tree / ".complete").unlink(missing_ok=True)
        proc.run(["cp", "-a", "--remove-destination", f"{stage}/.", str(tree)], timeout=600,
                 what="cp of the build into the image's root")
        tar = Path(tmp) / "rootfs.tar"
        proc.run(["tar", "-cf", str(tar), "-C", str(tree), "."], timeout=600,
                 what="tar of the image's root")
        log(f"images: docker import {image} ({tar.stat().st_size >> 20} MB, "
            f"{len(libs)} host libraries)")
        # Dockerfile syntax: a LABEL value expands $VARIABLES unless escaped.
        changes = [f"LABEL {k}=" + json.dumps(v).replace("$", "\\$")
                   for k, v in spec.labels().items()]
        changes += [f"ENV {k}={v}" for k, v in spec.env.items()]
        changes.append('CMD ["/bin/sh"]')
        repo, _, tag = image.rpartition(":")
        client().api.import_image_from_file(str(tar), repository=repo, tag=tag,
                                            changes=changes)
    return find_image(server)


def find_image(server: str) -> ImageSpec:
    """The declaration of the image that stands for catalog server ``server``: the
    local image made by ``harness images build``, else an official image pulled by
    hand. A clear error says how to get one when there is neither."""
    from docker.errors import ImageNotFound

    from .dockerd import client

    c = client()
    try:
        img = c.images.get(image_name(server))
        return ImageSpec.from_labels(image_name(server), img.labels or {})
    except ImageNotFound:
        pass
    official = OFFICIAL.get(server)
    if official is not None:
        try:
            c.images.get(official.image)
            return official
        except ImageNotFound:
            pass
    hint = f" or 'docker pull {official.image}'" if official else ""
    raise ProviderError(f"no Docker image for server '{server}': run 'harness images build "
                        f"--server {server}' (make docker-images){hint}")


def list_images() -> list[tuple[str, str, str]]:
    """(image, server, version) of the images the harness can use on this daemon."""
    from .dockerd import client

    out = []
    for img in client().images.list(filters={"label": f"{LABEL}.server"}):
        labels = img.labels or {}
        for tag in img.tags:
            out.append((tag, labels.get(f"{LABEL}.server", "?"),
                        labels.get(f"{LABEL}.version", "?")))
    return sorted(out)
