# fake: ms-per-block
# fake-compile-seconds: 0.2
#define BLOCK 100 // @kf tunable values(25,50,100,200)
class ModelNew: pass
