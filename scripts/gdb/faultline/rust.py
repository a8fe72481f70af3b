"""Reading Rust's standard types out of kernel memory: what `Arc`, `Vec`,
`BTreeMap`, `Option`, atomics and locks look like in the debug
information. Rust's own gdb support (`gdb_providers.py`, in the
toolchain's `lib/rustlib/etc/`) prints them; these give their contents
to the helpers. The layouts are those of the pinned toolchain
(rust-toolchain.toml).
"""
import gdb

from gdb_providers import children_of_btree_map, unwrap_unique_or_non_null


def pointer(nonnull):
    """The raw pointer inside a `NonNull` or `Unique`."""
    return unwrap_unique_or_non_null(nonnull)


def arc(value):
    """What an `Arc<T>` points at: the `T`."""
    return pointer(value["ptr"]).dereference()["data"]


def arc_address(value):
    """The address of the `T` an `Arc<T>` points at (what `Arc::as_ptr`
    gives, so a raw pointer elsewhere can be matched with it)."""
    return int(arc(value).address)


def weak(value):
    """What a `Weak<T>` points at, or None once the `T` is dropped (or for
    `Weak::new()`, which points nowhere)."""
    inner = pointer(value["ptr"])
    if int(inner) == (1 << 64) - 1:
        return None
    inner = inner.dereference()
    if atomic(inner["strong"]) == 0:
        return None
    return inner["data"]


def atomic(value):
    """The integer in an `AtomicU64`, `AtomicBool`, `AtomicPtr`..."""
    return int(value["v"]["value"]) if value.type.fields()[0].name == "v" else int(value["p"]["value"])


def spin(value):
    """The data a `sync::SpinLock` (or a `spin::Mutex`) guards, unlocked or not."""
    while value.type.fields()[0].name == "inner":
        value = value["inner"]
    return value["data"]["value"]


def mutex(value):
    """The data a `sync::Mutex` guards, unlocked or not."""
    return value["value"]["value"]


def variant(value):
    """An enum value's active variant, as (name, the variant's struct):
    gdb resolves a Rust enum's type to its discriminant (a field without a
    name, where there is one) and the one variant that value has."""
    active = [f for f in value.type.fields() if f.name][-1]
    return active.name, value[active]


def option(value):
    """The `T` in `Some(T)`, or None."""
    name, inner = variant(value)
    return inner["__0"] if name == "Some" else None


def vec(value):
    """The elements of a `Vec<T>`."""
    length = int(value["len"])
    data = pointer(value["buf"]["inner"]["ptr"])
    data = data.reinterpret_cast(value.type.template_argument(0).pointer())
    return [(data + i).dereference() for i in range(length)]


def btree(value):
    """The (key, value) pairs of a `BTreeMap`, in key order."""
    return list(children_of_btree_map(value))


def read_bytes(address, length):
    return bytes(gdb.selected_inferior().read_memory(address, length))


def str_(value):
    """A `&str` as a Python string."""
    length = int(value["length"])
    return read_bytes(int(value["data_ptr"]), length).decode(errors="replace") if length else ""


def string(value):
    """A `String` as a Python string."""
    items = value["vec"]
    length = int(items["len"])
    data = int(pointer(items["buf"]["inner"]["ptr"]))
    return read_bytes(data, length).decode(errors="replace") if length else ""


def once(value):
    """The value a `spin::Once` holds, or None before `call_once`."""
    if atomic(value["status"]["__0"]) != 2:  # spin's Status::Complete
        return None
    # UnsafeCell<MaybeUninit<ManuallyDrop<MaybeDangling<T>>>>
    return value["data"]["value"]["value"]["value"]["__0"]
