// The LLM experts on KernelBench problems: the roles' prompts filled with the problem's
// PyTorch source, shapes and baselines, the parent ModelNew and its diagnosis; answers
// parsed as ModelNew files.
#include <cstdio>
#include <mutex>
#include <sstream>

#include "kf/error.h"
#include "kf/evolution.h"
#include "kf/kernelbench_search.h"
#include "kf/llm.h"
#include "kf/router.h"
#include "kf/tunables.h"

namespace kf::kb {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::string fmt(double v, const char* f = "%.3g") {
    char buf[64];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

std::string rstrip(std::string s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
    return s;
}

bool python_fence(std::string lang) {
    lang = rstrip(lang);
    for (auto& c : lang) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return lang.empty() || lang == "python" || lang == "py" || lang == "python3";
}

/** Fenced ```python (or bare) blocks, in order. */
std::vector<std::string> python_blocks(const std::string& text, bool* unterminated) {
    std::vector<std::string> out;
    std::istringstream in(text);
    std::string line, cur;
    bool open = false, code = false;
    while (std::getline(in, line)) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        std::size_t a = line.find_first_not_of(" \t");
        std::string s = a == std::string::npos ? "" : rstrip(line.substr(a));
        if (s.rfind("```", 0) == 0) {
            if (!open) {
                open = true;
                code = python_fence(s.substr(3));
                cur.clear();
                continue;
            }
            if (s == "```") {
                if (code) out.push_back(cur);
                open = false;
                continue;
            }
        }
        if (open) cur += line + "\n";
    }
    if (unterminated) *unterminated = open;
    return out;
}

/** The KernelBench includes (context, rules) of the configured prompt folder, else the bundled ones. */
fs::path kernelbench_prompts(const llm::LlmEnsemble& ens) {
    std::error_code ec;
    fs::path own = ens.templates().dir() / "kernelbench";
    if (fs::is_directory(own, ec)) return own;
    return resources_dir() / "prompts" / "kernelbench";
}

std::string render_inspirations(const std::vector<const Member*>& ins) {
    std::string out;
    int n = 0;
    for (const Member* m : ins) {
        if (!m || n >= 3) continue;
        ++n;
        std::string src = m->source;
        try {
            src = apply_tunables(m->source, m->tunables);
        } catch (const Error&) {
        }
        out += "### From island " + std::to_string(m->island) + ": " + fmt(m->fitness) + "x eager PyTorch (family " + m->family +
               ", by " + m->expert + ")\n```python\n" + llm::excerpt(src, 120, 6000) + "```\n\n";
    }
    return out;
}

std::string ops_line(const ProblemFacts& f) {
    std::string s;
    for (const auto& o : f.ops) s += (s.empty() ? "" : ", ") + o;
    return s.empty() ? "none recognised" : s;
}

/** The values of the role templates (the native names too, so that any role template renders). */
llm::TemplateValues prompt_values(const llm::RoleSpec& role, const ProblemFacts& f, const ProposalContext& ctx) {
    const Member* parent = ctx.parent;
    std::string shown, diagnosis, tunables;
    if (parent) {
        shown = parent->source;
        try {
            shown = apply_tunables(parent->source, parent->tunables);
        } catch (const Error&) {
        }
        if (ctx.parent_diagnosis && ctx.parent_diagnosis->is_object()) diagnosis = llm::render_diagnosis(*ctx.parent_diagnosis, shown);
        if (diagnosis.empty())
            diagnosis = "status: " + std::string(to_string(parent->status)) + (parent->fitness > 0 ? ", " + fmt(parent->fitness) + "x eager PyTorch" : "") +
                        " (no detailed record available)\n";
        for (const auto& [k, v] : parent->tunables) tunables += (tunables.empty() ? "" : ", ") + k + "=" + std::to_string(v);
    }
    std::string notes;
    if (ctx.library_notes)
        for (const auto& n : *ctx.library_notes) notes += "- " + n + "\n";
    const std::string dclass = parent ? std::string(to_string(ctx.diagnosis_class.value_or(diagnosis_class(*parent)))) : "";
    return {
        {"role", role.id},
        {"role_title", role.title},
        {"task_name", f.key},
        {"task_title", f.key},
        {"task_description", "KernelBench problem " + f.key},
        {"op_class", f.op_class},
        {"ops", ops_line(f)},
        {"backend", "kernelbench"},
        {"language", "Python with CUDA C++ compiled by torch.utils.cpp_extension.load_inline (or Triton), run on an NVIDIA GPU"},
        {"fence", "python"},
        {"header", ""},
        {"sizes", f.shapes},
        {"shapes", f.shapes.empty() ? "see get_inputs() above" : f.shapes},
        {"baselines", f.baselines_line()},
        {"problem_source", f.source},
        {"allowed_libraries", "none"},
        {"tf32", "not allowed"},
        {"initial", parent ? "" : "yes"},
        {"improving", parent ? "yes" : ""},
        {"parent_id", parent ? std::to_string(parent->id) : ""},
        {"parent_status", parent ? std::string(to_string(parent->status)) : ""},
        {"parent_fitness", parent ? fmt(parent->fitness) : ""},
        {"parent_family", parent ? parent->family : ""},
        {"parent_tunables", tunables},
        {"parent_source", shown},
        {"diagnosis_class", dclass},
        {"diagnosis", diagnosis},
        {"library_notes", notes},
        {"inspirations", render_inspirations(ctx.inspirations)},
    };
}

/** Role templates from the configured folder; their includes (context, rules) from the KernelBench folder first. */
std::string render_role(const llm::LlmEnsemble& ens, const std::string& name, const llm::TemplateValues& v) {
    llm::PromptTemplates kb(kernelbench_prompts(ens));
    auto load = [&](const std::string& n) -> std::string {
        std::error_code ec;
        if (fs::exists(kb.dir() / (n + ".md"), ec)) return kb.text(n);
        return ens.templates().text(n);
    };
    try {
        return llm::render_template(load(name), v, load);
    } catch (const Error& e) {
        throw Error("prompt template " + name + ".md (KernelBench): " + e.what());
    }
}

class KernelBenchLlmExpert final : public llm::RoleExpert {
public:
    KernelBenchLlmExpert(std::shared_ptr<llm::LlmEnsemble> ens, llm::RoleSpec role, ProblemFacts facts)
        : RoleExpert(std::move(ens), std::move(role)), facts_(std::move(facts)) {}

private:
    std::optional<Proposal> attempt(const ProposalContext& ctx, std::string& why) override {
        if (ens_->budget_spent(&why)) return std::nullopt;
        if (ens_->cancelled()) return why = "cancelled: the run is stopping", std::nullopt;
        llm::TemplateValues v = prompt_values(role_, facts_, ctx);
        llm::ChatRequest req;
        req.system = render_role(*ens_, "system", v);
        req.user = render_role(*ens_, role_.id, v);
        // A first generation has no parent: its model is chosen as for a parent without a correct kernel.
        const DiagnosisClass dclass =
            ctx.parent ? diagnosis_class_from_string(v["diagnosis_class"]) : DiagnosisClass::Incorrect;
        std::string model;
        std::optional<llm::ChatResponse> r = ask(std::move(req), dclass, model, why);
        if (!r) return std::nullopt;
        const std::string who = "model " + model + ": ";
        std::string form;
        std::string source;
        try {
            source = parse_model_new(r->text, v["parent_source"], &form);
        } catch (const Error& e) {
            return why = who + e.what(), std::nullopt;
        }
        if (source == v["parent_source"]) return why = who + "the answer repeats the parent", std::nullopt;
        if (ctx.tried && ctx.tried->count(proposal_key(source, {}))) return why = who + "the answer was evaluated before", std::nullopt;
        Proposal p;
        p.source = source;
        p.family = !ctx.parent ? "llm/init" : form == "diff" && !ctx.parent->family.empty() ? ctx.parent->family : "llm/" + role_.id;
        p.expert = name();
        if (ctx.parent) p.parents = {ctx.parent->id};
        std::string said = llm::rationale_of(r->text);
        p.rationale = "[" + model + "] " + (said.empty() ? form + " ModelNew for " + role_.title : said);
        return p;
    }

    ProblemFacts facts_;
};

}  // namespace

std::string parse_model_new(const std::string& answer, const std::string& parent_source, std::string* form) {
    if (rstrip(answer).empty()) throw Error("empty answer");
    std::string source;
    if (answer.find("<<<<<<< SEARCH") != std::string::npos || answer.find("<<<<<<<SEARCH") != std::string::npos) {
        if (parent_source.empty()) throw Error("edits but no parent ModelNew to apply them to");
        source = llm::apply_edits(parent_source, llm::edit_blocks(answer));
        if (form) *form = "diff";
    } else {
        bool unterminated = false;
        auto blocks = python_blocks(answer, &unterminated);
        const std::string* pick = nullptr;
        for (const auto& b : blocks)
            if (b.find("class ModelNew") != std::string::npos && (!pick || b.size() > pick->size())) pick = &b;
        if (pick) source = *pick;
        else if (!blocks.empty()) throw Error("the code in the answer does not define class ModelNew");
        else if (unterminated) throw Error("unterminated code block (the answer looks cut off)");
        else if (answer.find("class ModelNew") != std::string::npos && answer.find("import ") != std::string::npos) source = answer;
        else {
            std::string head = llm::rationale_of(answer, 120);
            throw Error("no code in the answer" + (head.empty() ? std::string() : ": \"" + head + "\""));
        }
        if (form) *form = "full";
    }
    if (source.find("class ModelNew") == std::string::npos) throw Error("the answer does not define class ModelNew");
    if (source.back() != '\n') source += '\n';
    return source;
}

std::vector<std::shared_ptr<Expert>> llm_experts(const std::shared_ptr<llm::LlmEnsemble>& ens, const ProblemFacts& facts) {
    std::vector<std::shared_ptr<Expert>> out;
    if (!ens) return out;
    for (const auto& spec : llm::role_specs()) {
        auto rc = ens->config().roles.find(spec.id);
        if (rc == ens->config().roles.end() || !rc->second.enabled) continue;
        out.push_back(std::make_shared<KernelBenchLlmExpert>(ens, spec, facts));
    }
    return out;
}

std::string render_prompt(const llm::LlmEnsemble& ens, const std::string& role, const ProblemFacts& facts, const ProposalContext& ctx) {
    const llm::RoleSpec* spec = llm::find_role(role);
    if (!spec) throw Error("no role " + role);
    return render_role(ens, role, prompt_values(*spec, facts, ctx));
}

}  // namespace kf::kb
