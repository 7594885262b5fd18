"""Writes genuine Keras 2 legacy .h5 models (tf_keras 2.21, TensorFlow 2.21 from PyPI) and their
outputs, for the Keras importer's test of the Keras 2 spellings (inbound_nodes as lists, weight
names with ":0", Keras 2's hard_sigmoid).

    /usr/bin/python3 -m venv /work/venv-tf && /work/venv-tf/bin/pip install tensorflow-cpu tf-keras h5py
    /work/venv-tf/bin/python scripts/models/keras/make_keras2_models.py tests/models/keras
"""
import os
import sys
os.environ["TF_USE_LEGACY_KERAS"] = "1"
import numpy as np, tf_keras as keras, tensorflow as tf
print(keras.__version__, tf.__version__)
L = keras.layers
keras.utils.set_random_seed(5)
x = keras.Input((16, 16, 3), name="image")
a = L.Conv2D(8, 3, padding="same", activation="relu")(x)
a = L.BatchNormalization()(a)
b = L.DepthwiseConv2D(3, padding="same")(a)
b = L.Activation("hard_sigmoid")(b)
s = L.Add()([a, b])
s = L.MaxPooling2D(2)(s)
s = L.SeparableConv2D(12, 3, padding="same")(s)
g = L.GlobalAveragePooling2D()(s)
out = L.Dense(5, activation="softmax")(g)
m = keras.Model(x, out, name="keras2_cnn")
rng = np.random.default_rng(1)
for l in m.layers:
    ws = l.get_weights()
    if ws: l.set_weights([rng.normal(0, 0.3, w.shape).astype("float32") if "batch" not in l.name else rng.uniform(0.5, 1.5, w.shape).astype("float32") for w in ws])
inp = rng.normal(0, 1, (1, 16, 16, 3)).astype("float32")
y = m.predict(inp, verbose=0)
out = sys.argv[1] if len(sys.argv) > 1 else "."
m.save(os.path.join(out, "keras2_cnn.h5"))
seq = keras.Sequential([L.LSTM(6, return_sequences=True, input_shape=(7, 4)), L.GRU(5), L.Dense(3)], name="keras2_rnn")
for l in seq.layers:
    l.set_weights([rng.normal(0, 0.3, w.shape).astype("float32") for w in l.get_weights()])
inp2 = rng.normal(0, 1, (1, 7, 4)).astype("float32")
y2 = seq.predict(inp2, verbose=0)
seq.save(os.path.join(out, "keras2_rnn.h5"))
import h5py
for name, i, o in [("keras2_cnn", inp, y), ("keras2_rnn", inp2, y2)]:
    with h5py.File(os.path.join(out, name + ".reference.h5"), "w") as f:
        f.create_dataset("input0", data=i); f.create_dataset("output0", data=o.astype("float32"))
print("ok")
