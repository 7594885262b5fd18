#!/usr/bin/env python3
"""Writes the Keras importer's test models and Keras' own outputs for them.

    KERAS_BACKEND=jax /work/venv-keras/bin/python scripts/models/keras/make_keras_models.py tests/models/keras

(Keras 3.15.1 from PyPI with the JAX backend; see tests/models/keras/README.md.) For each model
NAME the folder gets NAME.keras (the Keras 3 archive), for some also NAME.h5 (the legacy
full-model HDF5 format, `model.save("NAME.h5")`), and NAME.reference.h5: datasets input0, input1,
... (what was fed) and output0, output1, ... (what `model.predict` returned). Seeds are fixed.
"""
import os
import sys

os.environ.setdefault("KERAS_BACKEND", "jax")
import h5py  # noqa: E402
import keras  # noqa: E402
import numpy as np  # noqa: E402
from keras import layers as L  # noqa: E402


def randomize_batch_norms(model, rng):
    """Random gamma, beta, moving mean and variance, so that folding them is visible."""
    for layer in model.layers:
        if isinstance(layer, L.BatchNormalization):
            w = layer.get_weights()
            c = w[0].shape[0]
            new = []
            if layer.scale:
                new.append(rng.uniform(0.5, 1.5, c).astype("float32"))
            if layer.center:
                new.append(rng.normal(0, 0.1, c).astype("float32"))
            new += [rng.normal(0, 0.1, c).astype("float32"), rng.uniform(0.5, 1.5, c).astype("float32")]
            layer.set_weights(new)


def randomize_biases(model, rng):
    """Keras initializes biases to zero; random ones catch a bias read from the wrong place."""
    for layer in model.layers:
        ws = layer.get_weights()
        changed = False
        for k, v in enumerate(layer.weights):
            if v.path.endswith("bias") and not isinstance(layer, L.BatchNormalization):
                ws[k] = rng.normal(0, 0.2, ws[k].shape).astype("float32")
                changed = True
        if changed:
            layer.set_weights(ws)


def cnn_functional():
    x = keras.Input((32, 32, 3), name="image")
    a = L.Conv2D(16, 3, padding="same", use_bias=False)(x)
    a = L.BatchNormalization()(a)
    a = L.ReLU()(a)
    b = L.DepthwiseConv2D(3, padding="same")(a)
    b = L.BatchNormalization(epsilon=1e-3)(b)
    b = L.Activation("relu6")(b)
    c = L.Conv2D(16, 1)(b)
    s = L.Add()([a, c])
    s = L.MaxPooling2D(2)(s)
    p = L.ZeroPadding2D(((1, 0), (0, 1)))(s)
    p = L.Conv2D(24, 3, strides=2, activation="swish")(p)
    q = L.SeparableConv2D(24, 3, padding="same", depth_multiplier=2, activation="elu")(p)
    m = L.Multiply()([p, q])
    cat = L.Concatenate()([m, q])
    g = L.AveragePooling2D(3, strides=2, padding="same")(cat)
    h = L.Concatenate()([L.GlobalAveragePooling2D()(g), L.GlobalMaxPooling2D()(g)])
    h = L.Dense(32, activation="gelu")(h)
    h = L.Dropout(0.3)(h)
    probs = L.Dense(10, activation="softmax", name="probs")(h)
    features = L.Dense(5, name="features")(L.Flatten()(g))
    return keras.Model(x, [probs, features], name="cnn_functional")


def cnn_sequential():
    return keras.Sequential(
        [
            keras.Input((28, 28, 1)),
            L.Conv2D(8, 5, strides=2, activation="relu"),
            L.MaxPooling2D(2, padding="same"),
            L.Conv2D(12, 3, padding="same", dilation_rate=2),
            L.BatchNormalization(center=False),
            L.Flatten(),
            L.Dense(16, activation="tanh"),
            L.LeakyReLU(negative_slope=0.1),
            L.Dense(10),
            L.Softmax(),
        ],
        name="cnn_sequential",
    )


def text_attention():
    tokens = keras.Input((12,), dtype="int32", name="tokens")
    x = L.Embedding(60, 16)(tokens)
    a = L.MultiHeadAttention(num_heads=2, key_dim=8)(x, x)
    x = L.LayerNormalization()(L.Add()([x, a]))
    f = L.Dense(32, activation="relu")(x)
    f = L.Dense(16)(f)
    x = L.LayerNormalization(epsilon=1e-5)(L.Add()([x, f]))
    c = L.MultiHeadAttention(num_heads=4, key_dim=4, output_shape=10)(x, x, use_causal_mask=True)
    pooled = L.GlobalAveragePooling1D()(x)
    out = L.Dense(4, name="logits")(pooled)
    return keras.Model(tokens, [out, L.Reshape((12, 10))(c)], name="text_attention")


def recurrent():
    x = keras.Input((10, 6), name="sequence")
    y = L.LSTM(8, return_sequences=True)(x)
    y = L.GRU(7, return_sequences=True)(y)
    last = L.GRU(5, reset_after=False, go_backwards=True)(y)
    r = L.SimpleRNN(4)(y)
    b = L.LSTM(3, go_backwards=True, return_sequences=True)(x)
    bi = L.Bidirectional(L.LSTM(4, return_sequences=True))(x)
    bi_sum = L.Bidirectional(L.GRU(3), merge_mode="sum")(bi)
    return keras.Model(x, [L.Dense(3)(last), r, b, bi, bi_sum], name="recurrent")


def conv1d():
    x = keras.Input((24, 4), name="signal")
    y = L.Conv1D(8, 3, padding="causal", activation="relu")(x)
    y = L.MaxPooling1D(2)(y)
    y = L.Conv1D(6, 5, padding="same", strides=2, dilation_rate=1)(y)
    y = L.AveragePooling1D(2, padding="same")(y)
    y = L.ZeroPadding1D((2, 1))(y)
    z = L.Permute((2, 1))(y)
    y = L.Conv1D(5, 2)(y)
    return keras.Model(x, [L.GlobalMaxPooling1D()(y), L.GlobalAveragePooling1D()(y), z], name="conv1d")


ACTIVATIONS = ["relu", "sigmoid", "tanh", "softmax", "log_softmax", "softplus", "softsign", "elu", "selu", "gelu",
               "silu", "hard_sigmoid", "hard_silu", "exponential", "linear", "leaky_relu", "relu6", "mish", "celu"]


def adapted_normalization():
    """A Normalization layer whose statistics come from adapt() (stored as weights)."""
    layer = L.Normalization()
    layer.adapt(np.random.default_rng(3).normal(1.5, 2.0, (64, 6)).astype("float32"))
    return layer


def activations():
    x = keras.Input((7,), name="x")
    outs = [L.Dense(5, activation=a, name="dense_" + a)(x) for a in ACTIVATIONS]
    h = L.Dense(6)(x)
    outs += [
        L.ReLU(max_value=0.8, negative_slope=0.1, threshold=0.2)(h),
        L.ReLU(max_value=6.0)(h),
        L.PReLU()(h),
        L.ELU(alpha=0.7)(h),
        L.LeakyReLU(negative_slope=0.25)(h),
        L.Softmax(axis=-1)(L.Reshape((2, 3))(h)),
        L.Subtract()([h, L.Dense(6)(x)]),
        L.Average()([h, L.Dense(6)(x)]),
        L.Maximum()([h, L.Dense(6)(x)]),
        L.Minimum()([h, L.Dense(6)(x)]),
        L.Rescaling(0.5, offset=0.25)(h),
        adapted_normalization()(h),
        L.Normalization(mean=[0.5, -1.0, 0.0, 2.0, 0.1, 0.3], variance=[4.0, 0.25, 1.0, 9.0, 2.0, 0.5], invert=True)(h),
    ]
    return keras.Model(x, outs, name="activations")


def upsample():
    x = keras.Input((6, 5, 3), name="image")
    y = L.UpSampling2D(2)(x)
    y = L.Conv2DTranspose(4, 3, strides=2, padding="same")(y)
    z = L.Conv2DTranspose(2, 2, strides=1, padding="valid", activation="relu")(x)
    w = L.Cropping2D(((1, 0), (1, 2)))(L.UpSampling2D((1, 2), interpolation="bilinear")(x))
    return keras.Model(x, [y, z, w], name="upsample")


def nested_shared():
    """Two inputs, a Dense layer shared by both (two calls, one set of weights), and a Sequential
    model used as a layer inside the functional one."""
    a = keras.Input((6,), name="left")
    b = keras.Input((6,), name="right")
    shared = L.Dense(5, activation="tanh", name="shared")
    inner = keras.Sequential([keras.Input((10,)), L.Dense(8, activation="relu"), L.Dense(3)], name="head")
    joined = L.Concatenate()([shared(a), shared(b)])
    return keras.Model([a, b], [inner(joined), L.Subtract()([shared(a), shared(b)])], name="nested_shared")


MODELS = {
    "cnn_functional": (cnn_functional, True),
    "cnn_sequential": (cnn_sequential, True),
    "text_attention": (text_attention, False),
    "recurrent": (recurrent, True),
    "conv1d": (conv1d, False),
    "activations": (activations, False),
    "upsample": (upsample, False),
    "nested_shared": (nested_shared, False),
}


def sample_input(spec, rng):
    shape = [1] + [int(d) for d in spec.shape[1:]]
    if "int" in str(spec.dtype):
        return rng.integers(0, 60, shape).astype("int32")
    return rng.normal(0, 1, shape).astype("float32")


def main(out_dir, names):
    os.makedirs(out_dir, exist_ok=True)
    for name in names:
        make, legacy = MODELS[name]
        keras.utils.set_random_seed(1234)
        rng = np.random.default_rng(42)
        model = make()
        randomize_batch_norms(model, rng)
        randomize_biases(model, rng)
        inputs = [sample_input(t, rng) for t in model.inputs]
        outputs = model.predict(inputs if len(inputs) > 1 else inputs[0], verbose=0)
        if not isinstance(outputs, (list, tuple)):
            outputs = [outputs]
        model.save(os.path.join(out_dir, name + ".keras"))
        if legacy:
            model.save(os.path.join(out_dir, name + ".h5"))
        with h5py.File(os.path.join(out_dir, name + ".reference.h5"), "w") as f:
            for k, v in enumerate(inputs):
                f.create_dataset("input%d" % k, data=v)
            for k, v in enumerate(outputs):
                f.create_dataset("output%d" % k, data=np.asarray(v, dtype="float32"))
        print(name, [i.shape for i in inputs], [np.asarray(o).shape for o in outputs])


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:] or list(MODELS))
