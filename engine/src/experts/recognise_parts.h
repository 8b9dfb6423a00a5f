#pragma once
// The two recognisers behind kf/recognise.h: one reads tokens, the other libclang's AST.
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "kf/recognise.h"

namespace kf {

/** "cannot derive the computation from <file>: <why>". */
Recognition cannot_derive(const std::string& file, const std::string& why);
/** The computation the loops read as, checked against the task; origin "derived from <file><how>: <shape>". */
Recognition derived(const Task& task, const nlohmann::json& j, const std::string& file, const std::string& how,
                    const std::string& shape);

/** The token-level recogniser (recognise.cpp). */
Recognition recognise_tokens(const Task& task, const std::string& source, const std::string& file);
/**
 * The AST recogniser (recognise_clang.cpp). `loaded` says whether libclang could be loaded;
 * when not, the reason says why ("libclang not found (...)").
 */
Recognition recognise_clang(const Task& task, const std::string& source, const std::string& file, bool& loaded);

}  // namespace kf
