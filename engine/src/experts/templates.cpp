// Instantiating the op-class templates for a task: the backend's templates for its computation.
#include <regex>

#include "kf/templates.h"
#include "template_parts.h"
#include "templates_backend.h"

namespace kf {

std::vector<TemplateKernel> instantiate_templates(const Task& task, const Computation& c, Backend backend) {
    std::string n_expr;
    if (c.rows.empty()) {
        // A flat map over the output's elements (a histogram: over its inputs' elements): the
        // shape, multiplied out in C.
        static const std::regex c_safe("[A-Za-z0-9_+*() -]+");
        const std::string flat = c.op == "histogram" && !c.inputs.empty() ? c.inputs.begin()->first : c.output;
        for (const auto& t : task.tensors) {
            if (t.name != flat) continue;
            for (const auto& d : t.shape) {
                if (!std::regex_match(d.text(), c_safe)) return {};
                n_expr += (n_expr.empty() ? "" : " * ") + templates::size_expr(d.text());
            }
        }
        if (n_expr.empty()) return {};
    }
    return backend == Backend::Cuda ? templates::cuda_templates(task, c, n_expr) : templates::host_templates(task, c, n_expr);
}

}  // namespace kf
