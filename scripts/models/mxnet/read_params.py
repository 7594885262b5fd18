#!/usr/bin/env python3
"""Reads an MXNet .params / NDArray-list file (mx.nd.save, save_checkpoint, Gluon export)
with nothing but struct and numpy, and documents the binary layout nnvm's importer parses.

Usage:
  read_params.py FILE [FILE...]          print every array's key, dtype and shape
  read_params.py --check FILE [FILE...]  also compare every array with mx.nd.load
                                         (needs mxnet; see make_mxnet_models.py)

Layout (everything little-endian; checked against MXNet 1.9.1's NDArray::Save/Load,
src/ndarray/ndarray.cc, and against files it wrote):

  file:
    uint64  magic           0x112 (kMXAPINDArrayListMagic)
    uint64  reserved        0
    uint64  n_arrays        then n_arrays NDArray records (below)
    uint64  n_keys          0 (mx.nd.save of a list) or n_arrays (of a dict)
    n_keys times:  uint64 length, then length bytes of the key (no terminator)
  Keys of save_checkpoint / Module files are "arg:NAME" and "aux:NAME"; Gluon's
  export() writes them the same way; Gluon's save_parameters() writes structural names
  without a prefix ("weight", "features.0.bias").

  NDArray record, V2 (0xF993FAC9, what MXNet 1.x writes) and V3 (0xF993FACA, written instead
  of V2 while NumPy shape semantics are on: mx.npx.set_np() / mx.util.np_shape(True)):
    uint32  magic
    int32   storage type    0 dense, 1 row_sparse, 2 csr  (V3: dense only)
    if sparse: storage shape (a TShape, below): shape of the stored values
    TShape  shape           int32 ndim, then ndim x int64 extents
    V2: ndim == 0 means "none" (empty handle): the record ends here.
    V3: ndim == -1 means unknown/none: the record ends here. ndim == 0 is a scalar
        (one element) and an extent of 0 a zero-size array; both carry ctx, dtype and data.
    int32   dev_type        1 cpu, 2 gpu, 3 cpu_pinned, 5 cpu_shared (as saved from)
    int32   dev_id
    int32   type_flag       0 float32, 1 float64, 2 float16, 3 uint8, 4 int32, 5 int8,
                            6 int64, 7 bool, 8 int16, 9 uint16, 10 uint32, 11 uint64,
                            12 bfloat16 (mshadow's TypeFlag)
    if sparse, per aux array (row_sparse: 1 = indices; csr: 2 = indptr, indices):
            int32 aux type_flag, TShape aux shape
    data    prod(storage shape if sparse else shape) * itemsize bytes, C order
    if sparse: each aux array's data, prod(aux shape) * aux itemsize bytes

  Older records that MXNet still loads (LegacyLoad):
    V1 (0xF993FAC8): no storage type; TShape (int32 ndim + int64 extents), then if ndim > 0
        int32 dev_type, int32 dev_id, int32 type_flag, data.
    Before V1 (no magic at all): the first uint32 IS ndim, then ndim x uint32 extents, then
        (if ndim > 0) int32 dev_type, int32 dev_id, int32 type_flag, data. Any first word
        that is not one of the three magics is read this way.
"""
import struct
import sys

import numpy as np

LIST_MAGIC = 0x112
V1_MAGIC = 0xF993FAC8
V2_MAGIC = 0xF993FAC9
V3_MAGIC = 0xF993FACA

# type_flag -> numpy dtype (bfloat16 has no numpy dtype: kept as raw uint16 bits)
DTYPES = {
    0: np.float32, 1: np.float64, 2: np.float16, 3: np.uint8, 4: np.int32, 5: np.int8,
    6: np.int64, 7: np.bool_, 8: np.int16, 9: np.uint16, 10: np.uint32, 11: np.uint64,
    12: np.uint16,
}
STYPES = {0: "default", 1: "row_sparse", 2: "csr"}
NUM_AUX = {0: 0, 1: 1, 2: 2}


class Reader:
    def __init__(self, buf):
        self.buf = buf
        self.pos = 0

    def take(self, fmt):
        vals = struct.unpack_from("<" + fmt, self.buf, self.pos)
        self.pos += struct.calcsize("<" + fmt)
        return vals if len(vals) > 1 else vals[0]

    def raw(self, n):
        if self.pos + n > len(self.buf):
            raise ValueError("truncated file")
        b = self.buf[self.pos:self.pos + n]
        self.pos += n
        return b

    def tshape(self):
        ndim = self.take("i")
        if ndim <= 0:
            return ndim, ()
        return ndim, tuple(self.take("%dq" % ndim) if ndim > 1 else (self.take("q"),))

    def data(self, type_flag, count):
        dt = np.dtype(DTYPES[type_flag])
        return np.frombuffer(self.raw(count * dt.itemsize), dtype=dt).copy()


def read_record(r):
    """Returns a dict describing one NDArray record (value is None for a 'none' array)."""
    magic = r.take("I")
    rec = {"magic": magic, "stype": 0, "ctx": None, "type_flag": None, "value": None}
    if magic in (V2_MAGIC, V3_MAGIC):
        stype = r.take("i")
        if stype not in NUM_AUX:
            raise ValueError("unknown storage type %d" % stype)
        rec["stype"] = stype
        nad = NUM_AUX[stype]
        sshape = r.tshape()[1] if nad else None
        ndim, shape = r.tshape()
        rec["shape"] = shape
        rec["ndim"] = ndim
        if (magic == V2_MAGIC and ndim == 0) or (magic == V3_MAGIC and ndim == -1):
            return rec  # none
        rec["ctx"] = r.take("ii")
        type_flag = r.take("i")
        rec["type_flag"] = type_flag
        aux = [(r.take("i"), r.tshape()[1]) for _ in range(nad)]
        n = int(np.prod(sshape if nad else shape, dtype=np.int64))
        values = r.data(type_flag, n)
        aux_data = [r.data(t, int(np.prod(s, dtype=np.int64))) for t, s in aux]
        if nad == 0:
            rec["value"] = values.reshape(shape)
        else:
            rec["sparse"] = {"storage_shape": sshape, "values": values.reshape(sshape),
                             "aux": [(t, s, d.reshape(s)) for (t, s), d in zip(aux, aux_data)]}
            rec["value"] = densify(stype, shape, rec["sparse"])
        return rec
    if magic == V1_MAGIC:
        ndim, shape = r.tshape()
    else:  # pre-V1: the word just read is ndim, extents are uint32
        ndim = magic
        shape = tuple(r.take("%dI" % ndim)) if ndim > 1 else ((r.take("I"),) if ndim else ())
    rec["shape"] = shape
    rec["ndim"] = ndim
    if ndim == 0:
        return rec
    rec["ctx"] = r.take("ii")
    rec["type_flag"] = r.take("i")
    n = int(np.prod(shape, dtype=np.int64))
    rec["value"] = r.data(rec["type_flag"], n).reshape(shape)
    return rec


def densify(stype, shape, sp):
    dt = sp["values"].dtype
    out = np.zeros(shape, dtype=dt)
    if stype == 1:  # row_sparse: aux0 = row indices, values = rows
        idx = sp["aux"][0][2]
        out[idx.astype(np.int64)] = sp["values"]
    else:  # csr: aux0 = indptr, aux1 = column indices, values = nonzeros
        indptr, cols = sp["aux"][0][2], sp["aux"][1][2]
        for row in range(shape[0]):
            for k in range(int(indptr[row]), int(indptr[row + 1])):
                out[row, int(cols[k])] = sp["values"][k]
    return out


def read_params(path):
    """Returns (records, keys): records in file order, keys ([] for an unnamed list)."""
    with open(path, "rb") as f:
        r = Reader(f.read())
    magic, reserved = r.take("QQ")
    if magic != LIST_MAGIC:
        raise ValueError("%s: bad list magic 0x%x" % (path, magic))
    if reserved != 0:
        raise ValueError("%s: reserved word is %d" % (path, reserved))
    count = r.take("Q")
    records = [read_record(r) for _ in range(count)]
    nkeys = r.take("Q")
    keys = [r.raw(r.take("Q")).decode("utf-8") for _ in range(nkeys)]
    if nkeys not in (0, count):
        raise ValueError("%s: %d keys for %d arrays" % (path, nkeys, count))
    if r.pos != len(r.buf):
        raise ValueError("%s: %d trailing bytes" % (path, len(r.buf) - r.pos))
    return records, keys


def describe(rec):
    tf = rec["type_flag"]
    dt = "none" if tf is None else ("bfloat16" if tf == 12 else np.dtype(DTYPES[tf]).name)
    return "magic=0x%08X stype=%s dtype=%s shape=%s ctx=%s" % (
        rec["magic"], STYPES.get(rec["stype"], rec["stype"]), dt, rec.get("shape"), rec["ctx"])


def check_against_mxnet(path, records, keys):
    import mxnet as mx
    if any(rec["magic"] == V3_MAGIC for rec in records):
        with mx.util.np_shape(True):  # V3 records load only with NumPy shape semantics on
            loaded = mx.nd.load(path)
    else:
        loaded = mx.nd.load(path)
    if isinstance(loaded, dict):
        assert sorted(loaded) == sorted(keys), (sorted(loaded), sorted(keys))
        pairs = [(k, loaded[k]) for k in keys]
    else:
        assert not keys
        pairs = list(enumerate(loaded))
    for (k, nd), rec in zip(pairs, records):
        ref = nd.asnumpy() if nd.stype == "default" else nd.tostype("default").asnumpy()
        mine = rec["value"]
        if rec["type_flag"] == 12:
            ref = ref.view(np.uint16) if ref.dtype.itemsize == 2 else ref
        assert mine is not None, k
        assert mine.shape == ref.shape, (k, mine.shape, ref.shape)
        assert mine.dtype == ref.dtype, (k, mine.dtype, ref.dtype)
        assert np.array_equal(mine, ref, equal_nan=mine.dtype.kind == "f"), k
    return len(pairs)


def main(argv):
    check = "--check" in argv
    paths = [a for a in argv if a != "--check"]
    if not paths:
        print(__doc__)
        return 2
    for path in paths:
        records, keys = read_params(path)
        print("%s: %d arrays, %d keys" % (path, len(records), len(keys)))
        for i, rec in enumerate(records):
            print("  %-40s %s" % (keys[i] if keys else "#%d" % i, describe(rec)))
        if check:
            n = check_against_mxnet(path, records, keys)
            print("  OK: %d arrays identical to mx.nd.load" % n)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
