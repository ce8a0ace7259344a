"""The verdicts' defaults, in a module of their own so that the command line's parser
(and its --help) names them without loading the statistics."""
from __future__ import annotations

NOISE = 0.03  # changes under 3% are not called, however significant
MAX_CV = 0.10  # a side whose runs vary more than 10% gets no verdict
WINDOW_S = 6  # switchback: seconds per window
WINDOWS = 132  # switchback: windows, 33 quads
COUNT_BAND = 0.005  # counted instructions: changes under 0.5% are not called
COUNTED_WINDOWS = 4  # a counted run's judged windows (harness run --measure instructions)
