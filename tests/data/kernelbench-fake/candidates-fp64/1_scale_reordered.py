# fake: ms=0.8 fp64
# A stand-in for a candidate that reorders fp32 arithmetic: outside today's 1e-4, correct by
# the fp64 rule (and so rejected by the strict policy).
