"""The autocast classes: how ``xlac.autocast`` treats an operation. Each primitive declares its default class
(``declare(..., autocast=FLOAT32)``); :class:`xlac.AutocastPolicy` starts from those and can change any.

>>> from xlac.ir import primitives as P
>>> P.dot_general.autocast_class, P.exp.autocast_class, P.reshape.autocast_class
('lower_precision', 'float32', 'follow')
"""

LOWER_PRECISION = "lower_precision"
FLOAT32 = "float32"
PROMOTE = "promote"
FOLLOW = "follow"
KEEP = "keep"
CLASSES = (LOWER_PRECISION, FLOAT32, PROMOTE, FOLLOW, KEEP)

MEANING = {
    LOWER_PRECISION: "float inputs cast to the autocast dtype; result in that dtype "
                     "(or float32 with accumulate='float32')",
    FLOAT32: "float16/bfloat16 inputs cast up to float32; result float32",
    PROMOTE: "inputs cast to the widest floating dtype among them (Python scalars follow the arrays)",
    FOLLOW: "runs in the dtype its inputs have",
    KEEP: "runs in the dtypes it was traced with",
}
