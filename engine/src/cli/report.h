#pragma once
// Human-readable rendering of diagnoses and device information for the terminal.
#include <string>

#include <nlohmann/json.hpp>

#include "kf/diagnosis.h"

namespace kf::cli {

/** A multi-line summary of a diagnosis; `source` (the candidate) is used to quote error lines. */
std::string render_diagnosis(const Diagnosis& d, const std::string& source);
std::string render_device(const nlohmann::json& info);

}  // namespace kf::cli
