# fake: status=incorrect
class ModelNew: pass
