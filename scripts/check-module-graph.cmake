# Checks the engine's module graph (docs/architecture.md, "Modules"):
#
#   cmake -P scripts/check-module-graph.cmake                 check this checkout
#   cmake -DKF_SOURCE_DIR=<root> -P ...                       check another tree
#   cmake -DSELF_TEST=ON -DWORK_DIR=<dir> -P ...              show that the check fails
#
# It reads the modules from engine/modules.cmake, the same table engine/CMakeLists.txt builds
# the targets from, and fails when
#   - a module names a module not declared above it (a cycle, or a module that does not exist);
#   - a file of a module includes a header of a module it cannot see: a module sees its own
#     headers, those of the modules it names and, through them, of the modules they name PUBLIC
#     (what CMake puts on its include path);
#   - a public header includes one of a module its module names PRIVATE only;
#   - a file includes another module's file by a relative path instead of its kf/ header;
#   - a kf/ header belongs to no module, or to two.
# Each failure names the file, the line and the edge. The self test copies the tree, adds
# back edges and a cycle to the copy and fails unless the check catches each one.
cmake_minimum_required(VERSION 3.20)

if(NOT KF_SOURCE_DIR)
  get_filename_component(KF_SOURCE_DIR "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
endif()
set(engine "${KF_SOURCE_DIR}/engine")

# --- Self test -----------------------------------------------------------------------------
# Runs this script on a copy of the tree with one defect added at a time.
if(SELF_TEST)
  if(NOT WORK_DIR)
    set(WORK_DIR "${CMAKE_CURRENT_BINARY_DIR}/module-graph-self-test")
  endif()
  set(copy "${WORK_DIR}/tree")
  file(REMOVE_RECURSE "${copy}")
  file(MAKE_DIRECTORY "${copy}/engine")
  file(COPY "${engine}/modules.cmake" "${engine}/src" DESTINATION "${copy}/engine")
  set(failures 0)

  # check(<name> <expect: pass|fail> [<regex the output must match>...])
  function(check name expect)
    execute_process(COMMAND ${CMAKE_COMMAND} -DKF_SOURCE_DIR=${copy} -P ${CMAKE_CURRENT_LIST_FILE}
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
    set(ok TRUE)
    if(expect STREQUAL "pass" AND NOT rc EQUAL 0)
      set(ok FALSE)
    elseif(expect STREQUAL "fail" AND rc EQUAL 0)
      set(ok FALSE)
    endif()
    foreach(pattern IN LISTS ARGN)
      if(NOT out MATCHES "${pattern}")
        set(ok FALSE)
        message("  the output does not match: ${pattern}")
      endif()
    endforeach()
    if(ok)
      message("ok: ${name}: the check ${expect}ed")
    else()
      message("NOT OK: ${name}: expected the check to ${expect}, exit code ${rc}; its output:\n${out}")
      math(EXPR n "${failures} + 1")
      set(failures ${n} PARENT_SCOPE)
    endif()
  endfunction()

  # with_line(<file> <line>): appends a line to a file of the copy, saving the original.
  function(with_line file line)
    file(READ "${copy}/${file}" original)
    set(saved_original "${original}" PARENT_SCOPE)
    file(APPEND "${copy}/${file}" "${line}\n")
  endfunction()
  function(restore file)
    file(WRITE "${copy}/${file}" "${saved_original}")
  endfunction()
  function(line_count file out)
    file(READ "${copy}/${file}" text)
    string(REGEX MATCHALL "\n" newlines "${text}")
    list(LENGTH newlines n)
    set(${out} ${n} PARENT_SCOPE)
  endfunction()

  check("the tree as it is" pass "module graph: [0-9]+ modules, [0-9]+ files, no back edge")

  # A low module including the engine facade: the back edge util -> engine.
  set(f engine/src/util/paths.cpp)
  line_count(${f} n)
  math(EXPR n "${n} + 1")
  with_line(${f} "#include \"kf/engine.h\"")
  check("util includes kf/engine.h" fail "${f}:${n}: util includes kf/engine.h of module engine"
        "back edge")
  restore(${f})

  # A public header of a low module including one of a higher module: task -> evolve.
  set(f engine/src/task/include/kf/task.h)
  line_count(${f} n)
  math(EXPR n "${n} + 1")
  with_line(${f} "#include \"kf/search.h\"")
  check("task's public header includes kf/search.h" fail "${f}:${n}: task includes kf/search.h of module evolve")
  restore(${f})

  # Reaching into another module's folder by a relative path: a private header of the store.
  set(f engine/src/task/task.cpp)
  line_count(${f} n)
  math(EXPR n "${n} + 1")
  with_line(${f} "#include \"../store/schema.h\"")
  check("task includes ../store/schema.h" fail "${f}:${n}: task includes ../store/schema.h, a file of module store")
  restore(${f})

  # A header no module owns.
  set(f engine/src/eval/evaluator.cpp)
  with_line(${f} "#include \"kf/no_such_header.h\"")
  check("an unknown kf/ header" fail "kf/no_such_header.h, which no module has")
  restore(${f})

  # A forward edge that is not declared: eval does not name experts.
  set(f engine/src/eval/evaluator.cpp)
  with_line(${f} "#include \"kf/experts.h\"")
  check("eval includes kf/experts.h undeclared" fail "eval includes kf/experts.h of module experts")
  restore(${f})

  # A public header including a module named PRIVATE only: eval's headers and profile.
  set(f engine/src/eval/include/kf/evaluator.h)
  with_line(${f} "#include \"kf/profile.h\"")
  check("a public header includes a PRIVATE module" fail "names profile PRIVATE")
  restore(${f})

  # A cycle in the declared graph: util naming the engine facade.
  file(READ "${copy}/engine/modules.cmake" original)
  string(REPLACE "kf_module(util)" "kf_module(util PRIVATE engine)" cyclic "${original}")
  if(cyclic STREQUAL original)
    message("NOT OK: engine/modules.cmake has no line kf_module(util) to add the cycle to")
    math(EXPR failures "${failures} + 1")
  else()
    file(WRITE "${copy}/engine/modules.cmake" "${cyclic}")
    check("util names engine in modules.cmake" fail "util names engine, which is not declared above it")
    file(WRITE "${copy}/engine/modules.cmake" "${original}")
  endif()

  check("the tree restored" pass)
  file(REMOVE_RECURSE "${copy}")
  if(failures GREATER 0)
    message(FATAL_ERROR "module graph self test: ${failures} case(s) not caught as expected")
  endif()
  message("module graph self test: every defect was caught")
  return()
endif()

# --- The declared graph --------------------------------------------------------------------
set(KF_MODULES)
set(errors)
# problem(<part>...): one problem, its parts joined into one message.
macro(problem)
  string(CONCAT problem_text ${ARGN})
  list(APPEND errors "${problem_text}")
endmacro()
macro(kf_module name)
  cmake_parse_arguments(KF_MODULE "" "" "PUBLIC;PRIVATE" ${ARGN})
  if(KF_MODULE_UNPARSED_ARGUMENTS)
    problem("engine/modules.cmake: kf_module(${name}): unexpected ${KF_MODULE_UNPARSED_ARGUMENTS}")
  endif()
  if("${name}" IN_LIST KF_MODULES)
    problem("engine/modules.cmake: ${name} is declared twice")
  endif()
  set(KF_PUBLIC_${name})
  set(KF_DEPS_${name})
  foreach(dep IN LISTS KF_MODULE_PUBLIC KF_MODULE_PRIVATE)
    if(NOT dep IN_LIST KF_MODULES)
      problem("engine/modules.cmake: ${name} names ${dep}, which is not declared above it "
                         "(a module may use only those declared before it: a cycle, or no such module)")
    else()
      list(APPEND KF_DEPS_${name} ${dep})
    endif()
  endforeach()
  foreach(dep IN LISTS KF_MODULE_PUBLIC)
    if(dep IN_LIST KF_MODULES)
      list(APPEND KF_PUBLIC_${name} ${dep})
    endif()
  endforeach()
  if(NOT IS_DIRECTORY "${engine}/src/${name}")
    problem("engine/modules.cmake: module ${name} has no folder engine/src/${name}")
  endif()
  list(APPEND KF_MODULES ${name})
endmacro()
include("${engine}/modules.cmake")

# What a consumer of a module sees: the module and, transitively, what it names PUBLIC.
# Declared order is a topological order, so each module's lists are complete when needed.
foreach(m IN LISTS KF_MODULES)
  set(exported_${m} ${m})
  foreach(dep IN LISTS KF_PUBLIC_${m})
    list(APPEND exported_${m} ${exported_${dep}})
  endforeach()
  list(REMOVE_DUPLICATES exported_${m})
  # What the module's own files see: itself and what each module it names exports.
  set(visible_${m} ${m})
  foreach(dep IN LISTS KF_DEPS_${m})
    list(APPEND visible_${m} ${exported_${dep}})
  endforeach()
  list(REMOVE_DUPLICATES visible_${m})
  # What its public headers may include: what it exports.
  set(public_${m} ${exported_${m}})
endforeach()

# --- Who owns each header --------------------------------------------------------------------
foreach(m IN LISTS KF_MODULES)
  file(GLOB_RECURSE headers RELATIVE "${engine}/src/${m}/include" "${engine}/src/${m}/include/kf/*")
  foreach(h IN LISTS headers)
    if(DEFINED owner_${h})
      problem("${h} is a public header of both ${owner_${h}} and ${m}")
    endif()
    set(owner_${h} ${m})
  endforeach()
endforeach()

# The module whose folder holds an absolute path under engine/src; empty for none.
function(folder_module path out)
  set(${out} "" PARENT_SCOPE)
  file(RELATIVE_PATH rel "${engine}/src" "${path}")
  if(rel MATCHES "^([^/.][^/]*)/")
    if(CMAKE_MATCH_1 IN_LIST KF_MODULES)
      set(${out} ${CMAKE_MATCH_1} PARENT_SCOPE)
    endif()
  endif()
endfunction()

# --- Every #include of every module --------------------------------------------------------
set(file_count 0)
foreach(m IN LISTS KF_MODULES)
  file(GLOB_RECURSE files "${engine}/src/${m}/*.h" "${engine}/src/${m}/*.hpp" "${engine}/src/${m}/*.cpp"
                          "${engine}/src/${m}/*.cu" "${engine}/src/${m}/*.cuh")
  list(SORT files)
  foreach(path IN LISTS files)
    math(EXPR file_count "${file_count} + 1")
    file(RELATIVE_PATH shown "${KF_SOURCE_DIR}" "${path}")
    get_filename_component(dir "${path}" DIRECTORY)
    set(is_public FALSE)
    string(FIND "${path}" "${engine}/src/${m}/include/" at)
    if(at EQUAL 0)
      set(is_public TRUE)
    endif()
    file(STRINGS "${path}" includes ENCODING UTF-8 REGEX "^[ \t]*#[ \t]*include[ \t]*[\"<][^\">]+[\">]")
    if(NOT includes)
      continue()
    endif()
    file(READ "${path}" text)
    foreach(line IN LISTS includes)
      string(REGEX MATCH "#[ \t]*include[ \t]*([\"<])([^\">]+)[\">]" _ "${line}")
      set(quote "${CMAKE_MATCH_1}")
      set(name "${CMAKE_MATCH_2}")
      # The line number, for the message.
      string(FIND "${text}" "${line}" at)
      string(SUBSTRING "${text}" 0 ${at} before)
      string(REGEX MATCHALL "\n" newlines "${before}")
      list(LENGTH newlines n)
      math(EXPR n "${n} + 1")
      set(where "${shown}:${n}")

      set(owner "")
      if(quote STREQUAL "\"" AND EXISTS "${dir}/${name}" AND NOT IS_DIRECTORY "${dir}/${name}")
        # A file next to this one (or reached by a relative path): it must be the module's own.
        get_filename_component(target "${dir}/${name}" ABSOLUTE)
        folder_module("${target}" target_module)
        if(target_module STREQUAL "")
          continue()
        endif()
        if(NOT target_module STREQUAL m)
          problem("${where}: ${m} includes ${name}, a file of module ${target_module}: "
                             "use that module's public kf/ headers")
          continue()
        endif()
        string(FIND "${target}" "${engine}/src/${m}/include/" at)
        if(NOT is_public OR at EQUAL 0)
          continue()
        endif()
        # A public header including one of its module's private headers.
        problem("${where}: public header includes ${name}, a private header of ${m}")
        continue()
      elseif(name MATCHES "^kf/")
        if(NOT DEFINED owner_${name})
          problem("${where}: ${m} includes ${name}, which no module has (engine/src/*/include/${name})")
          continue()
        endif()
        set(owner ${owner_${name}})
      else()
        continue()  # a system header, or text of a generated source
      endif()

      if(NOT owner IN_LIST visible_${m})
        list(FIND KF_MODULES ${m} mi)
        list(FIND KF_MODULES ${owner} oi)
        if(oi GREATER mi)
          string(CONCAT why "a back edge (${owner} is declared after ${m} in engine/modules.cmake): "
                 "move what ${m} needs down, or the code that needs it up")
        else()
          set(why "${m} does not name ${owner} in engine/modules.cmake (nor a module that exports it)")
        endif()
        problem("${where}: ${m} includes ${name} of module ${owner}: ${why}")
      elseif(is_public AND NOT owner IN_LIST public_${m})
        problem("${where}: public header of ${m} includes ${name}, but ${m} names ${owner} PRIVATE "
                           "only: make it PUBLIC in engine/modules.cmake")
      endif()
    endforeach()
  endforeach()
endforeach()

list(LENGTH KF_MODULES module_count)
if(errors)
  list(LENGTH errors error_count)
  string(REPLACE ";" "\n" text "${errors}")
  message("${text}")
  message(FATAL_ERROR "module graph: ${error_count} problem(s) (docs/architecture.md, \"Modules\")")
endif()
message("module graph: ${module_count} modules, ${file_count} files, no back edge")
