"""Names of files, for the helpers that show mappings and folios: the
path an inode is linked at, found as the kernel's `vfs::find_path` finds
it (a search of the directory tree from the root; faultline has no
dentries), and the inodes the tree holds.
"""
import gdb

from . import kernel, rust

_paths = None


def _tree():
    """{inode address: path} of every inode linked in the tree, each at the
    first path the kernel's search would find, and [(path, inode)]."""
    global _paths
    if _paths is None:
        paths, inodes = {}, []
        root = rust.arc(rust.once(kernel.static("faultline::fs::vfs::path::ROOT")))
        paths[int(root.address)] = "/"

        def search(directory, prefix):
            for name, child in rust.btree(rust.spin(directory["entries"])):
                inode = rust.arc(child)
                path = prefix + "/" + rust.string(name)
                paths.setdefault(int(inode.address), path)
                inodes.append((path, inode))
                kind, value = rust.variant(inode["kind"])
                if kind == "Dir":
                    search(value["__0"], path)

        search(dir_of(root), "")
        _paths = (paths, inodes)
    return _paths


def dir_of(inode):
    kind, value = rust.variant(inode["kind"])
    return value["__0"] if kind == "Dir" else None


def shmem_file(inode):
    """The `ShmemFile` of a regular file's inode, or None."""
    kind, value = rust.variant(inode["kind"])
    return value["__0"] if kind == "File" else None


def find_path(inode):
    """The path `inode` is linked at, or "" (a memfd, an unlinked file)."""
    return _tree()[0].get(int(inode.address), "")


def proc_path(inode):
    """Where /proc says the file is (the kernel's `Inode::proc_path`): its
    path, or `/NAME (deleted)` for a file the kernel named and linked
    nowhere, or ""."""
    path = find_path(inode)
    if path:
        return path
    name = rust.once(inode["anon_name"])
    return f"/{rust.string(name)} (deleted)" if name is not None else ""


def st_dev(inode):
    """The device number stat reports (the kernel's `Inode::stat`): its
    tmpfs mount's, else its pseudo file system's, else 0:1."""
    sb = rust.once(inode["sb"])
    if sb is not None:
        return int(rust.arc(sb)["dev"])
    return int(rust.atomic(inode["pseudo_dev"])) or 1


def linked_inodes():
    return _tree()[1]


def _forget(_event):
    global _paths
    _paths = None


# The tree changes whenever the kernel runs.
gdb.events.cont.connect(_forget)
