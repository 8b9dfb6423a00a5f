# fake: ms=0.5
class ModelNew: pass
