// Prompt templates ({{name}}, {{#name}}...{{/name}}, {{> file}}) and compact renderings of
// diagnoses for them.
#include <cstdio>
#include <fstream>
#include <functional>
#include <sstream>

#include "kf/error.h"
#include "kf/llm/prompt.h"
#include "kf/vocabulary.h"
#include "kf/text.h"

namespace kf::llm {

using nlohmann::json;

namespace {

using util::trim;

std::string render(const std::string& text, const TemplateValues& values, const TemplateLoader& load, int depth) {
    if (depth > 8) throw Error("template includes nest more than 8 deep (an include loop?)");
    std::string out;
    std::size_t pos = 0;
    while (true) {
        std::size_t open = text.find("{{", pos);
        if (open == std::string::npos) {
            out += text.substr(pos);
            break;
        }
        out += text.substr(pos, open - pos);
        std::size_t close = text.find("}}", open + 2);
        if (close == std::string::npos) throw Error("unclosed '{{' in template");
        std::string tag = trim(text.substr(open + 2, close - open - 2));
        pos = close + 2;
        if (tag.empty()) throw Error("empty placeholder '{{}}' in template");
        if (tag[0] == '>') {
            std::string name = trim(tag.substr(1));
            if (!load) throw Error("template include {{> " + name + "}} without a template folder");
            out += render(load(name), values, load, depth + 1);
        } else if (tag[0] == '#') {
            std::string name = trim(tag.substr(1));
            std::string end_tag = "{{/" + name + "}}";
            std::size_t end = text.find(end_tag, pos);
            if (end == std::string::npos) throw Error("section {{#" + name + "}} is not closed by " + end_tag);
            auto v = values.find(name);
            if (v == values.end()) throw Error("unknown placeholder {{#" + name + "}} in template");
            if (!trim(v->second).empty()) out += render(text.substr(pos, end - pos), values, load, depth);
            pos = end + end_tag.size();
        } else if (tag[0] == '/') {
            throw Error("{{" + tag + "}} closes no section");
        } else {
            auto v = values.find(tag);
            if (v == values.end()) throw Error("unknown placeholder {{" + tag + "}} in template");
            out += v->second;
        }
    }
    return out;
}

std::string num(double v, const char* fmt = "%.4g") {
    char buf[64];
    std::snprintf(buf, sizeof buf, fmt, v);
    return buf;
}

double dval(const json& j, const char* k) { return j.is_object() && j.contains(k) && j[k].is_number() ? j[k].get<double>() : 0.0; }
long long ival(const json& j, const char* k) {
    return j.is_object() && j.contains(k) && j[k].is_number() ? j[k].get<long long>() : 0;
}
std::string sval(const json& j, const char* k) {
    return j.is_object() && j.contains(k) && j[k].is_string() ? j[k].get<std::string>() : std::string();
}

std::vector<std::string> lines_of(const std::string& s) {
    std::vector<std::string> out;
    std::istringstream in(s);
    std::string l;
    while (std::getline(in, l)) out.push_back(l);
    return out;
}

}  // namespace

std::string render_template(const std::string& text, const TemplateValues& values, const TemplateLoader& load) {
    return render(text, values, load, 0);
}

PromptTemplates::PromptTemplates(std::filesystem::path dir) : dir_(std::move(dir)) {}

std::string PromptTemplates::text(const std::string& name) const {
    if (name.empty() || name.find('/') != std::string::npos || name.find("..") != std::string::npos)
        throw Error("bad template name '" + name + "'");
    std::lock_guard lock(mu_);
    if (auto it = cache_.find(name); it != cache_.end()) return it->second;
    std::filesystem::path p = dir_ / (name + ".md");
    std::ifstream in(p, std::ios::binary);
    if (!in) throw Error("no prompt template " + p.string());
    std::stringstream ss;
    ss << in.rdbuf();
    cache_[name] = ss.str();
    return ss.str();
}

std::string PromptTemplates::render(const std::string& name, const TemplateValues& values) const {
    try {
        return render_template(text(name), values, [this](const std::string& n) { return text(n); });
    } catch (const Error& e) {
        throw Error("prompt template " + (dir_ / (name + ".md")).string() + ": " + e.what());
    }
}

std::string excerpt(const std::string& source, std::size_t max_lines, std::size_t max_chars) {
    auto lines = lines_of(source);
    std::string out;
    std::size_t n = 0;
    for (; n < lines.size() && n < max_lines && out.size() + lines[n].size() < max_chars; ++n) out += lines[n] + "\n";
    if (n < lines.size()) out += "// ... (" + std::to_string(lines.size() - n) + " more lines)\n";
    return out;
}

std::string render_diagnosis(const json& d, const std::string& source, std::size_t max_chars) {
    if (!d.is_object()) return {};
    std::ostringstream os;
    os << "status: " << sval(d, "status") << " (stage " << sval(d, "stage") << ")";
    if (std::string m = sval(d, "message"); !m.empty()) os << " - " << m;
    os << "\n";
    auto src = lines_of(source);
    if (d.contains("compile") && d["compile"].is_object()) {
        const json& c = d["compile"];
        int shown = 0;
        if (c.contains("diagnostics") && c["diagnostics"].is_array()) {
            for (const char* sev : {"error", "warning"}) {
                for (const auto& g : c["diagnostics"]) {
                    if (sval(g, "severity") != sev || shown >= (std::string(sev) == "error" ? 10 : 13)) continue;
                    if (shown == 0) os << "compiler messages:\n";
                    ++shown;
                    long long line = ival(g, "line");
                    os << "  " << (line > 0 ? "line " + std::to_string(line) + (ival(g, "column") ? ":" + std::to_string(ival(g, "column")) : "") + ": " : "")
                       << sev << ": " << sval(g, "message") << "\n";
                    if (line > 0 && static_cast<std::size_t>(line) <= src.size())
                        os << "      " << line << " | " << src[static_cast<std::size_t>(line - 1)] << "\n";
                }
            }
        }
        if (shown == 0 && parse_status(sval(d, "status")) == Status::CompileError && !sval(c, "log").empty())
            os << "compiler output:\n" << excerpt(sval(c, "log"), 25, 2500);
        if (c.contains("resources") && c["resources"].is_array())
            for (const auto& r : c["resources"])
                os << "  kernel " << sval(r, "kernel") << ": " << ival(r, "registers") << " registers, " << ival(r, "shared_bytes")
                   << " B shared, " << ival(r, "stack_bytes") << " B stack, spills " << ival(r, "spill_store_bytes") << " B stored / "
                   << ival(r, "spill_load_bytes") << " B loaded\n";
    }
    if (d.contains("correctness") && d["correctness"].is_object()) {
        const json& c = d["correctness"];
        bool passed = c.value("passed", false);
        os << "correctness: " << (passed ? "passed" : "FAILED") << ", max abs error " << num(dval(c, "max_abs_error"))
           << ", max rel error " << num(dval(c, "max_rel_error")) << ", mismatches " << ival(c, "mismatches") << "\n";
        if (c.contains("cases") && c["cases"].is_array())
            for (const auto& k : c["cases"]) {
                if (k.value("passed", false)) continue;
                os << "  case " << sval(k, "name") << ": " << ival(k, "trials_passed") << "/" << ival(k, "trials") << " trials passed, "
                   << ival(k, "mismatches") << " of " << ival(k, "elements") << " elements wrong, max abs " << num(dval(k, "max_abs_error"))
                   << ", max rel " << num(dval(k, "max_rel_error"));
                if (ival(k, "nan_count")) os << ", NaN " << ival(k, "nan_count");
                if (ival(k, "inf_count")) os << ", Inf " << ival(k, "inf_count");
                if (ival(k, "unwritten")) os << ", unwritten " << ival(k, "unwritten");
                if (k.value("inputs_modified", false)) os << ", input " << sval(k, "modified_input") << " MODIFIED";
                if (k.value("out_of_bounds_write", false)) os << ", out-of-bounds write to " << sval(k, "out_of_bounds_tensor");
                if (k.contains("first_mismatch") && k["first_mismatch"].is_object()) {
                    const json& f = k["first_mismatch"];
                    os << "; first mismatch " << sval(f, "tensor") << "[" << ival(f, "index") << "]: expected " << num(dval(f, "expected"))
                       << ", got " << num(dval(f, "actual"));
                }
                os << "\n";
            }
    }
    if (d.contains("timing") && d["timing"].is_object()) {
        const json& t = d["timing"];
        os << "timing (" << sval(t, "case_name") << "): median " << num(dval(t, "median_ms")) << " ms, reference "
           << num(dval(t, "reference_median_ms")) << " ms, speedup " << num(dval(t, "speedup"), "%.3f") << "x, spread "
           << num(dval(t, "spread"), "%.2f") << "\n";
    }
    if (d.contains("roofline") && d["roofline"].is_object()) {
        const json& r = d["roofline"];
        os << "roofline: " << num(dval(r, "achieved_gbps")) << " GB/s of " << num(dval(r, "peak_gbps")) << " ("
           << num(100 * dval(r, "bandwidth_fraction"), "%.1f") << "%), " << num(dval(r, "achieved_gflops")) << " GFLOP/s of "
           << num(dval(r, "peak_gflops")) << " (" << num(100 * dval(r, "compute_fraction"), "%.1f") << "%), intensity "
           << num(dval(r, "arithmetic_intensity")) << " FLOP/B, bound: " << sval(r, "bound") << ", floor "
           << num(dval(r, "floor_ms")) << " ms\n";
    }
    if (d.contains("profile") && d["profile"].is_object() && !d["profile"].empty()) {
        os << "profiler metrics:\n";
        int n = 0;
        std::function<void(const json&, const std::string&)> walk = [&](const json& j, const std::string& prefix) {
            for (auto it = j.begin(); it != j.end() && n < 30; ++it) {
                std::string key = prefix.empty() ? it.key() : prefix + "." + it.key();
                if (it->is_object()) walk(*it, key);
                else if (it->is_number()) os << "  " << key << " = " << num(it->get<double>()) << "\n", ++n;
                else if (it->is_string()) os << "  " << key << " = " << it->get<std::string>() << "\n", ++n;
            }
        };
        walk(d["profile"], "");
    }
    if (d.contains("integrity") && d["integrity"].is_array())
        for (const auto& c : d["integrity"])
            if (sval(c, "outcome") == "fail") os << "integrity check FAILED: " << sval(c, "name") << ": " << sval(c, "detail") << "\n";
    if (ival(d, "kernel_launches") > 0) os << "kernel launches per call: " << ival(d, "kernel_launches") << "\n";
    if (d.contains("advice") && d["advice"].is_array() && !d["advice"].empty()) {
        os << "advice:";
        for (const auto& a : d["advice"])
            if (a.is_string()) os << " " << a.get<std::string>();
        os << "\n";
    }
    std::string out = os.str();
    if (out.size() > max_chars) out = out.substr(0, max_chars) + "\n(diagnosis cut)\n";
    return out;
}

}  // namespace kf::llm
