# Checks the engine's module graph at link level (docs/architecture.md, "Modules"):
#
#   cmake -DKF_LIB_DIR=<build>/engine [-DNM=nm] -P scripts/check-module-links.cmake
#   ... -DSELF_TEST=ON -DWORK_DIR=<dir> ...   show that it fails (the facade declared as using
#                                             util only, while its library uses the others)
#
# The include check (check-module-graph.cmake) cannot see a function declared in a low
# module's header but defined in a higher module's source: it compiles, and links wherever
# every module is linked (kf_core). This reads the built libraries libkf_<module>.a and fails
# when a module uses a symbol defined in a module it does not use, directly or through the
# modules it uses (engine/modules.cmake), naming the module, the symbol and its definer.
cmake_minimum_required(VERSION 3.20)

if(NOT KF_SOURCE_DIR)
  get_filename_component(KF_SOURCE_DIR "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
endif()
if(NOT KF_LIB_DIR)
  message(FATAL_ERROR "KF_LIB_DIR: the build folder holding libkf_<module>.a")
endif()
if(NOT NM)
  set(NM nm)
endif()

if(SELF_TEST)
  if(NOT WORK_DIR)
    set(WORK_DIR "${CMAKE_CURRENT_BINARY_DIR}/module-links-self-test")
  endif()
  file(READ "${KF_SOURCE_DIR}/engine/modules.cmake" table)
  string(REGEX REPLACE "kf_module\\(engine[^)]*\\)" "kf_module(engine PRIVATE util)" narrowed "${table}")
  if(narrowed STREQUAL table)
    message(FATAL_ERROR "engine/modules.cmake declares no module engine to narrow")
  endif()
  file(WRITE "${WORK_DIR}/engine/modules.cmake" "${narrowed}")
  set(args -DKF_LIB_DIR=${KF_LIB_DIR} -DNM=${NM} -P ${CMAKE_CURRENT_LIST_FILE})
  execute_process(COMMAND ${CMAKE_COMMAND} -DKF_SOURCE_DIR=${WORK_DIR} ${args}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(rc EQUAL 0 OR NOT out MATCHES "kf_engine uses [^\n]+, defined in kf_(eval|evolve|kernelbench|store|task)")
    message(FATAL_ERROR "the link check did not fail on the engine declared as using util only:\n${out}")
  endif()
  message("ok: the engine declared as using util only: the check failed")
  execute_process(COMMAND ${CMAKE_COMMAND} -DKF_SOURCE_DIR=${KF_SOURCE_DIR} ${args}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the link check fails on the tree as it is:\n${out}")
  endif()
  message("ok: the tree as it is: the check passed")
  file(REMOVE_RECURSE "${WORK_DIR}")
  return()
endif()

# The declared graph, and what each module links: the modules it names, and theirs.
set(KF_MODULES)
macro(kf_module name)
  cmake_parse_arguments(KF_MODULE "" "" "PUBLIC;PRIVATE" ${ARGN})
  set(links_${name})
  foreach(dep IN LISTS KF_MODULE_PUBLIC KF_MODULE_PRIVATE)
    list(APPEND links_${name} ${dep} ${links_${dep}})
  endforeach()
  list(REMOVE_DUPLICATES links_${name})
  list(APPEND KF_MODULES ${name})
endmacro()
include("${KF_SOURCE_DIR}/engine/modules.cmake")

# Who defines each global symbol (code, data, read-only data, bss; not weak or inline ones).
foreach(m IN LISTS KF_MODULES)
  set(lib "${KF_LIB_DIR}/libkf_${m}.a")
  if(NOT EXISTS "${lib}")
    message(FATAL_ERROR "${lib} is missing: build the engine first")
  endif()
  execute_process(COMMAND ${NM} -g --defined-only "${lib}" OUTPUT_VARIABLE out RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${NM} failed on ${lib}")
  endif()
  string(REGEX MATCHALL "[0-9a-f]+ [TDBR] [A-Za-z0-9_.$]+" defs "${out}")
  foreach(d IN LISTS defs)
    string(REGEX REPLACE "^[0-9a-f]+ [TDBR] " "" sym "${d}")
    if(NOT DEFINED def_${sym})
      set(def_${sym} ${m})
    endif()
  endforeach()
endforeach()

# Every symbol a module needs from outside itself.
set(errors)
foreach(m IN LISTS KF_MODULES)
  execute_process(COMMAND ${NM} -u "${KF_LIB_DIR}/libkf_${m}.a" OUTPUT_VARIABLE out)
  string(REGEX MATCHALL "U [A-Za-z0-9_.$]+" uses "${out}")
  list(REMOVE_DUPLICATES uses)
  foreach(u IN LISTS uses)
    string(SUBSTRING "${u}" 2 -1 sym)
    if(DEFINED def_${sym})
      set(owner ${def_${sym}})
      if(NOT owner STREQUAL m AND NOT owner IN_LIST links_${m})
        execute_process(COMMAND c++filt "${sym}" OUTPUT_VARIABLE shown OUTPUT_STRIP_TRAILING_WHITESPACE)
        if(NOT shown)
          set(shown "${sym}")
        endif()
        list(APPEND errors "kf_${m} uses ${shown}, defined in kf_${owner}, a module ${m} does not use")
      endif()
    endif()
  endforeach()
endforeach()

if(errors)
  list(LENGTH errors n)
  string(REPLACE ";" "\n" text "${errors}")
  message("${text}")
  message(FATAL_ERROR "module links: ${n} use(s) across the graph: move the definition to the "
                      "module that declares it (docs/architecture.md, \"Modules\")")
endif()
list(LENGTH KF_MODULES n)
message("module links: ${n} modules, every symbol a module uses is defined below it")
