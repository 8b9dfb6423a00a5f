// Host (C++ with OpenMP) kernels written from the generic plan: the reference's statements as
// it wrote them, each parallel nest under `omp parallel for` (collapsed where its loops are
// perfectly nested), tensors only added to at shared elements updated under `omp atomic`.
#include <sstream>

#include "generic_parts.h"
#include "kf/generic.h"
#include "template_parts.h"

namespace kf::generic {

namespace {

class HostPrinter {
public:
    Printer p;
    std::set<std::string> atomics;

    std::string block(const Block& b, const std::string& indent) const {
        std::string out;
        for (const Stmt& s : b) out += stmt(s, indent);
        return out;
    }

    std::string stmt(const Stmt& s, const std::string& indent) const {
        if (s.kind == Stmt::Kind::Assign && s.target->kind == Expr::Kind::Index && atomics.count(s.target->text) &&
            (s.op == "+=" || s.op == "-="))
            return indent + "#pragma omp atomic\n" + p.stmt(s, indent);
        if (s.kind == Stmt::Kind::For)
            return indent + p.loop_header(s) + " {\n" + block(s.body, indent + "    ") + indent + "}\n";
        if (s.kind == Stmt::Kind::If) {
            std::string out = indent + "if (" + p.expr(s.cond) + ") {\n" + block(s.body, indent + "    ") + indent + "}";
            if (!s.else_body.empty()) out += " else {\n" + block(s.else_body, indent + "    ") + indent + "}";
            return out + "\n";
        }
        return p.stmt(s, indent);
    }
};

/** The loops of the chain that are perfectly nested (nothing between them), for collapse(). */
std::size_t perfectly_nested(const NestPlan& n) {
    std::size_t k = 1;
    while (k < n.chain.size() && n.chain[k - 1]->body.size() == 1) ++k;
    return k;
}

/**
 * How many loops of the chain the collapsed instance collapses: its perfectly nested ones, but
 * of three or more the innermost stays a loop of its own, which the compiler vectorises
 * (collapsed with the others, its index is rebuilt at every iteration: an NCHW bias add over
 * (n, c, p) measured 0.07x collapse(3)); the outer ones give the threads plenty to share.
 */
std::size_t collapsed(const NestPlan& n) {
    const std::size_t k = perfectly_nested(n);
    return k >= 3 ? k - 1 : k;
}

}  // namespace

std::vector<TemplateKernel> host_generic(const Task& task, const Program& prog) {
    std::vector<TemplateKernel> out;
    for (bool collapse : {false, true}) {
        bool any = false;
        for (const auto& n : prog.nests) any = any || perfectly_nested(n) > 1;
        if (collapse && !any) continue;
        std::ostringstream os;
        os << "#include \"kf_task.h\"\n\n#include <algorithm>\n#include <cmath>\n#include <limits>\n#include <vector>\n\n"
           << "// Generic kernel (host), written from the reference's loop nest by the generic expert: each nest whose\n"
           << "// iterations are independent runs under omp parallel for"
           << (collapse ? ", its perfectly nested loops collapsed" : "") << ".\n";
        if (!prog.opaque.empty()) os << "// " << prog.opaque << ".\n";
        os << "\n// 0: one contiguous share of the iterations per thread (schedule(static)); else chunks of CHUNK dealt in turn.\n"
           << "#define CHUNK 0  // @kf tunable values(0, 1, 16, 64, 256, 4096)\n\n" << helpers(Dialect::Host)
           << reference_functions(prog, Dialect::Host) << templates::entry_definition(task, Backend::Host) << " {\n";
        std::size_t nest = 0;
        for (const Stmt& st : prog.body) {
            HostPrinter hp;
            hp.p.dialect = Dialect::Host;
            if (st.kind != Stmt::Kind::For) {
                os << hp.stmt(st, "    ");
                continue;
            }
            const NestPlan& n = prog.nests[nest++];
            hp.atomics = n.atomics;
            if (!n.chain.empty()) {
                const std::size_t k = collapse ? collapsed(n) : 1;
                const std::string c = k > 1 ? " collapse(" + std::to_string(k) + ")" : "";
                os << "#if CHUNK > 0\n#pragma omp parallel for schedule(static, CHUNK)" << c
                   << "\n#else\n#pragma omp parallel for schedule(static)" << c << "\n#endif\n";
            } else {
                os << "    // The loops may not run in parallel: " << n.serial_why << ".\n";
            }
            os << hp.stmt(st, "    ");
        }
        os << "}\n";
        const std::string name = collapse ? "generic/omp-collapse" : "generic/omp";
        out.push_back({name, name,
                       std::string("generic kernel from the reference's loops: omp parallel for over each independent nest") +
                           (collapse ? ", perfectly nested loops collapsed" : "") + " (tunable: CHUNK)",
                       os.str()});
    }
    return out;
}

}  // namespace kf::generic
