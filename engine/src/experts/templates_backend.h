#pragma once
// The op-class templates of each backend (templates_host.cpp, templates_cuda.cpp).
#include <string>
#include <vector>

#include "kf/templates.h"

namespace kf::templates {

/** n_expr: the output's element count as C (for a flat map). */
std::vector<TemplateKernel> host_templates(const Task& task, const Computation& c, const std::string& n_expr);
std::vector<TemplateKernel> cuda_templates(const Task& task, const Computation& c, const std::string& n_expr);

}  // namespace kf::templates
