# The engine's modules, lowest first (docs/architecture.md, "Modules"). Each line declares one
# module: the folder engine/src/<name> (its sources) with its public headers in
# engine/src/<name>/include/kf, built as the static library kf_<name>, and the modules its
# files include: PUBLIC where its public headers include theirs, PRIVATE where only its
# sources do. A module may use only modules declared above it, so the graph has no cycle.
#
# engine/CMakeLists.txt builds the targets from this table; scripts/check-module-graph.cmake
# (the unit_module_graph test) reads the same table and checks every #include against it.
kf_module(util)
kf_module(task        PRIVATE util)
kf_module(diagnosis   PRIVATE util)
kf_module(tunables    PUBLIC task util)
kf_module(compile     PUBLIC diagnosis task PRIVATE util)
kf_module(profile     PUBLIC diagnosis task util)
kf_module(eval        PUBLIC compile diagnosis task tunables PRIVATE profile util)
kf_module(exec        PUBLIC eval PRIVATE util)
kf_module(store       PUBLIC diagnosis util)
kf_module(library     PUBLIC util PRIVATE task)
kf_module(experts     PUBLIC diagnosis task tunables PRIVATE compile util)
kf_module(evolve      PUBLIC diagnosis eval experts library store task PRIVATE tunables util)
kf_module(llm         PUBLIC diagnosis evolve experts library task util PRIVATE store tunables)
kf_module(kernelbench PUBLIC diagnosis evolve exec library llm util PRIVATE compile eval store tunables)
kf_module(engine      PUBLIC eval evolve kernelbench store task PRIVATE util)
