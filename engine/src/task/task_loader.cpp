// Loading and validating task manifests (docs/task-format.md). Every rejection names the
// file, the field and the reason.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "kf/error.h"
#include "kf/paths.h"
#include "kf/task.h"

namespace kf {

namespace {

using nlohmann::json;

class ManifestReader {
public:
    explicit ManifestReader(std::string file) : file_(std::move(file)) {}

    [[noreturn]] void fail(const std::string& field, const std::string& reason) const {
        throw TaskError(file_, field, reason);
    }

    const json& require(const json& obj, const std::string& key, const std::string& path) const {
        if (!obj.is_object()) fail(path, "expected an object");
        auto it = obj.find(key);
        if (it == obj.end()) fail(join(path, key), "required field is missing");
        return *it;
    }

    std::string string_at(const json& obj, const std::string& key, const std::string& path, bool required,
                          const std::string& fallback = {}) const {
        if (!obj.contains(key)) {
            if (required) fail(join(path, key), "required field is missing");
            return fallback;
        }
        const json& v = obj.at(key);
        if (!v.is_string()) fail(join(path, key), "expected a string, got " + std::string(v.type_name()));
        return v.get<std::string>();
    }

    double number_at(const json& obj, const std::string& key, const std::string& path, double fallback,
                     bool required = false) const {
        if (!obj.contains(key)) {
            if (required) fail(join(path, key), "required field is missing");
            return fallback;
        }
        const json& v = obj.at(key);
        if (!v.is_number()) fail(join(path, key), "expected a number, got " + std::string(v.type_name()));
        return v.get<double>();
    }

    const json& array_at(const json& obj, const std::string& key, const std::string& path, bool required) const {
        static const json empty = json::array();
        if (!obj.contains(key)) {
            if (required) fail(join(path, key), "required field is missing");
            return empty;
        }
        const json& v = obj.at(key);
        if (!v.is_array()) fail(join(path, key), "expected an array, got " + std::string(v.type_name()));
        return v;
    }

    Expr expr_at(const json& v, const std::string& path, const std::set<std::string>& names) const {
        std::string text;
        if (v.is_string()) text = v.get<std::string>();
        else if (v.is_number()) text = v.dump();
        else fail(path, "expected an expression (string or number)");
        Expr e;
        try {
            e = Expr::parse(text);
        } catch (const ExprError& err) {
            fail(path, err.what());
        }
        for (const auto& n : e.names())
            if (!names.count(n)) fail(path, "unknown name '" + n + "' (declared sizes: " + list(names) + ")");
        return e;
    }

    static std::string join(const std::string& path, const std::string& key) {
        return path.empty() ? key : path + "." + key;
    }
    static std::string index(const std::string& path, std::size_t i) { return path + "[" + std::to_string(i) + "]"; }
    static std::string list(const std::set<std::string>& names) {
        std::string out;
        for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
        return out.empty() ? "none" : out;
    }

    void check_keys(const json& obj, const std::string& path, std::initializer_list<const char*> allowed) const {
        for (auto it = obj.begin(); it != obj.end(); ++it) {
            bool known = std::any_of(allowed.begin(), allowed.end(), [&](const char* k) { return it.key() == k; });
            if (!known) fail(join(path, it.key()), "unknown field");
        }
    }

private:
    std::string file_;
};

bool valid_identifier(const std::string& s) {
    static const std::regex re("[A-Za-z_][A-Za-z0-9_]*");
    return std::regex_match(s, re);
}

InitSpec read_init(const ManifestReader& r, const json& j, const std::string& path) {
    InitSpec init;
    if (!j.is_object()) r.fail(path, "expected an object such as {\"dist\": \"uniform\", \"low\": -1, \"high\": 1}");
    init.dist = r.string_at(j, "dist", path, true);
    if (init.dist == "uniform") {
        r.check_keys(j, path, {"dist", "low", "high"});
        init.a = r.number_at(j, "low", path, -1);
        init.b = r.number_at(j, "high", path, 1);
        if (!(init.a < init.b)) r.fail(path, "uniform needs low < high");
    } else if (init.dist == "normal") {
        r.check_keys(j, path, {"dist", "mean", "std"});
        init.a = r.number_at(j, "mean", path, 0);
        init.b = r.number_at(j, "std", path, 1);
        if (!(init.b > 0)) r.fail(ManifestReader::join(path, "std"), "must be positive");
    } else if (init.dist == "randint") {
        r.check_keys(j, path, {"dist", "low", "high"});
        init.a = r.number_at(j, "low", path, 0, true);
        init.b = r.number_at(j, "high", path, 0, true);
        if (!(init.a < init.b) || init.a != std::floor(init.a) || init.b != std::floor(init.b))
            r.fail(path, "randint needs integers low < high (high exclusive)");
    } else if (init.dist == "bernoulli") {
        r.check_keys(j, path, {"dist", "p"});
        init.a = r.number_at(j, "p", path, 0.5);
        if (init.a < 0 || init.a > 1) r.fail(ManifestReader::join(path, "p"), "must be within [0, 1]");
    } else if (init.dist == "constant") {
        r.check_keys(j, path, {"dist", "value"});
        init.a = r.number_at(j, "value", path, 0, true);
    } else {
        r.fail(ManifestReader::join(path, "dist"),
               "unknown distribution '" + init.dist + "' (uniform, normal, randint, bernoulli, constant)");
    }
    return init;
}

Tolerance read_tolerance(const ManifestReader& r, const json& j, const std::string& path) {
    if (!j.is_object()) r.fail(path, "expected an object {\"atol\": ..., \"rtol\": ...}");
    r.check_keys(j, path, {"atol", "rtol"});
    Tolerance t;
    t.atol = r.number_at(j, "atol", path, 0, true);
    t.rtol = r.number_at(j, "rtol", path, 0, true);
    if (t.atol < 0 || t.rtol < 0) r.fail(path, "tolerances must not be negative");
    return t;
}

std::vector<Backend> read_backends(const ManifestReader& r, const json& arr, const std::string& path) {
    std::vector<Backend> out;
    for (std::size_t i = 0; i < arr.size(); ++i) {
        auto b = arr[i].is_string() ? backend_from_string(arr[i].get<std::string>()) : std::nullopt;
        if (!b) r.fail(ManifestReader::index(path, i), "expected \"cuda\" or \"host\"");
        out.push_back(*b);
    }
    return out;
}

/** The manifest's JSON object, its top-level fields checked against those the format knows. */
json read_manifest(const ManifestReader& r, const std::filesystem::path& manifest) {
    namespace fs = std::filesystem;
    std::error_code ec;
    std::ifstream in(manifest);
    if (!in) {
        if (!fs::exists(manifest, ec)) r.fail("", "no such file (a task folder holds a task.json)");
        r.fail("", "cannot be read");
    }
    json j;
    try {
        j = json::parse(in);
    } catch (const json::parse_error& e) {
        r.fail("", std::string("not valid JSON: ") + e.what());
    }
    if (!j.is_object()) r.fail("", "the manifest must be a JSON object");
    r.check_keys(j, "", {"format", "name", "title", "description", "op_class", "tags", "sizes", "size_type",
                         "tensors", "params", "tolerance", "work", "rules", "cases", "reference", "computation"});
    return j;
}

/** format, name, title, description, op_class and tags. */
void read_identity(const ManifestReader& r, const json& j, Task& t) {
    t.format = static_cast<int>(r.number_at(j, "format", "", 0, true));
    if (t.format != 1)
        r.fail("format", "unsupported format " + std::to_string(t.format) + " (this build reads format 1)");
    t.name = r.string_at(j, "name", "", true);
    static const std::regex name_re("[A-Za-z0-9_][A-Za-z0-9_.-]*");
    if (!std::regex_match(t.name, name_re)) r.fail("name", "use letters, digits, '_', '-' and '.'");
    t.title = r.string_at(j, "title", "", false, t.name);
    t.description = r.string_at(j, "description", "", false);
    t.op_class = r.string_at(j, "op_class", "", true);
    for (const auto& tag : r.array_at(j, "tags", "", false))
        if (tag.is_string()) t.tags.push_back(tag.get<std::string>());
        else r.fail("tags", "expected strings");
}

/** The size names and their C type; returns the names (what shapes and work may use). */
std::set<std::string> read_sizes(const ManifestReader& r, const json& j, Task& t) {
    std::set<std::string> names;
    const json& sizes = r.array_at(j, "sizes", "", true);
    if (sizes.empty()) r.fail("sizes", "declare at least one size name");
    for (std::size_t i = 0; i < sizes.size(); ++i) {
        std::string path = ManifestReader::index("sizes", i);
        if (!sizes[i].is_string()) r.fail(path, "expected a name");
        std::string n = sizes[i].get<std::string>();
        if (!valid_identifier(n)) r.fail(path, "'" + n + "' is not a C identifier");
        if (!names.insert(n).second) r.fail(path, "duplicate size '" + n + "'");
        t.size_names.push_back(n);
    }
    std::string size_type = r.string_at(j, "size_type", "", false, "i32");
    if (size_type == "i32") t.size_type = DType::I32;
    else if (size_type == "i64") t.size_type = DType::I64;
    else r.fail("size_type", "expected \"i32\" or \"i64\"");
    return names;
}

/** One tensor at `path`; its name joins `idents`. An output's tolerance defaults to the task's. */
TensorSpec read_tensor(const ManifestReader& r, const json& tj, const std::string& path, const std::set<std::string>& names,
                       std::set<std::string>& idents, const Tolerance& task_tolerance) {
    if (!tj.is_object()) r.fail(path, "expected an object");
    r.check_keys(tj, path, {"name", "role", "dtype", "shape", "init", "tolerance", "description"});
    TensorSpec ts;
    ts.name = r.string_at(tj, "name", path, true);
    if (!valid_identifier(ts.name)) r.fail(path + ".name", "'" + ts.name + "' is not a C identifier");
    if (!idents.insert(ts.name).second) r.fail(path + ".name", "'" + ts.name + "' is already declared");
    std::string role = r.string_at(tj, "role", path, true);
    if (role == "input") ts.role = TensorRole::Input;
    else if (role == "output") ts.role = TensorRole::Output;
    else r.fail(path + ".role", "expected \"input\" or \"output\", got \"" + role + "\"");
    std::string dt = r.string_at(tj, "dtype", path, true);
    auto dtype = dtype_from_string(dt);
    if (!dtype) r.fail(path + ".dtype", "unknown dtype '" + dt + "' (f32, f64, f16, bf16, i32, i64, u8, bool)");
    ts.dtype = *dtype;
    const json& shape = r.array_at(tj, "shape", path, true);
    if (shape.empty()) r.fail(path + ".shape", "a tensor needs at least one dimension");
    for (std::size_t d = 0; d < shape.size(); ++d)
        ts.shape.push_back(r.expr_at(shape[d], ManifestReader::index(path + ".shape", d), names));
    if (ts.role == TensorRole::Input) {
        if (tj.contains("tolerance")) r.fail(path + ".tolerance", "only outputs have a tolerance");
        if (tj.contains("init")) ts.init = read_init(r, tj.at("init"), path + ".init");
        if (!is_floating(ts.dtype) && ts.init.dist == "uniform" && !tj.contains("init"))
            ts.init = InitSpec{"randint", 0, ts.dtype == DType::Bool ? 2.0 : 100.0};
    } else {
        if (tj.contains("init")) r.fail(path + ".init", "outputs are poisoned, not initialised");
        ts.tolerance = tj.contains("tolerance") ? read_tolerance(r, tj.at("tolerance"), path + ".tolerance")
                                                : task_tolerance;
    }
    return ts;
}

/** The tensors, at least one input and one output. */
void read_tensors(const ManifestReader& r, const json& j, Task& t, const std::set<std::string>& names,
                  std::set<std::string>& idents) {
    const json& tensors = r.array_at(j, "tensors", "", true);
    for (std::size_t i = 0; i < tensors.size(); ++i)
        t.tensors.push_back(read_tensor(r, tensors[i], ManifestReader::index("tensors", i), names, idents, t.tolerance));
    auto count_role = [&](TensorRole role) {
        return std::count_if(t.tensors.begin(), t.tensors.end(), [&](const TensorSpec& s) { return s.role == role; });
    };
    if (count_role(TensorRole::Input) == 0) r.fail("tensors", "declare at least one input");
    if (count_role(TensorRole::Output) == 0) r.fail("tensors", "declare at least one output");
}

/** The scalar parameters; their names join `idents`. */
void read_params(const ManifestReader& r, const json& j, Task& t, std::set<std::string>& idents) {
    const json& params = r.array_at(j, "params", "", false);
    for (std::size_t i = 0; i < params.size(); ++i) {
        std::string path = ManifestReader::index("params", i);
        const json& pj = params[i];
        if (!pj.is_object()) r.fail(path, "expected an object");
        r.check_keys(pj, path, {"name", "dtype", "value", "description"});
        ParamSpec p;
        p.name = r.string_at(pj, "name", path, true);
        if (!valid_identifier(p.name)) r.fail(path + ".name", "'" + p.name + "' is not a C identifier");
        if (!idents.insert(p.name).second) r.fail(path + ".name", "'" + p.name + "' is already declared");
        std::string dt = r.string_at(pj, "dtype", path, true);
        auto dtype = dtype_from_string(dt);
        if (!dtype || !(*dtype == DType::F32 || *dtype == DType::F64 || *dtype == DType::I32 || *dtype == DType::I64))
            r.fail(path + ".dtype", "a parameter is f32, f64, i32 or i64");
        p.dtype = *dtype;
        p.value = r.number_at(pj, "value", path, 0, true);
        t.params.push_back(p);
    }
}

/** The work per call: flops and bytes as expressions of the sizes. */
void read_work(const ManifestReader& r, const json& j, Task& t, const std::set<std::string>& names) {
    const json& work = r.require(j, "work", "");
    if (!work.is_object()) r.fail("work", "expected an object with flops and bytes");
    r.check_keys(work, "work", {"flops", "bytes"});
    t.flops = r.expr_at(r.require(work, "flops", "work"), "work.flops", names);
    t.bytes = r.expr_at(r.require(work, "bytes", "work"), "work.bytes", names);
}

/** The optional rules: allowed libraries, TF32 and tensor cores. */
void read_rules(const ManifestReader& r, const json& j, Task& t) {
    if (!j.contains("rules")) return;
    const json& rules = j.at("rules");
    if (!rules.is_object()) r.fail("rules", "expected an object");
    r.check_keys(rules, "rules", {"allowed_libraries", "allow_tf32", "allow_tensor_cores"});
    static const std::set<std::string> known = {"cublas", "cublasLt", "cudnn", "cufft", "curand", "cusparse"};
    const json& libs = r.array_at(rules, "allowed_libraries", "rules", false);
    for (std::size_t i = 0; i < libs.size(); ++i) {
        std::string path = ManifestReader::index("rules.allowed_libraries", i);
        if (!libs[i].is_string() || !known.count(libs[i].get<std::string>()))
            r.fail(path, "expected one of cublas, cublasLt, cudnn, cufft, curand, cusparse");
        t.rules.allowed_libraries.push_back(libs[i].get<std::string>());
    }
    for (auto [key, dest] : {std::pair{"allow_tf32", &t.rules.allow_tf32},
                             std::pair{"allow_tensor_cores", &t.rules.allow_tensor_cores}}) {
        if (!rules.contains(key)) continue;
        if (!rules.at(key).is_boolean()) r.fail(std::string("rules.") + key, "expected true or false");
        *dest = rules.at(key).get<bool>();
    }
}

/** The reference file of each backend, which must exist beside the manifest. */
void read_references(const ManifestReader& r, const json& j, Task& t) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const json& refs = r.require(j, "reference", "");
    if (!refs.is_object() || refs.empty()) r.fail("reference", "expected {\"cuda\": \"reference.cu\", \"host\": \"reference.cpp\"}");
    for (auto it = refs.begin(); it != refs.end(); ++it) {
        auto b = backend_from_string(it.key());
        if (!b) r.fail("reference." + it.key(), "unknown backend (cuda, host)");
        if (!it->is_string()) r.fail("reference." + it.key(), "expected a file name");
        fs::path p = t.dir / it->get<std::string>();
        if (!fs::is_regular_file(p, ec)) r.fail("reference." + it.key(), "file not found: " + p.string());
        t.references[*b] = p;
    }
}

/** A case's sizes: every declared size, a positive integer that fits the size type, and no other. */
void read_case_sizes(const ManifestReader& r, const json& cj, const std::string& path, const Task& t,
                     const std::set<std::string>& names, TaskCase& c) {
    const json& sz = r.require(cj, "sizes", path);
    if (!sz.is_object()) r.fail(path + ".sizes", "expected an object of size values");
    for (const auto& n : t.size_names) {
        if (!sz.contains(n)) r.fail(path + ".sizes." + n, "missing (every case gives every size)");
        const json& v = sz.at(n);
        if (!v.is_number_integer() || v.get<std::int64_t>() <= 0)
            r.fail(path + ".sizes." + n, "expected a positive integer");
        if (t.size_type == DType::I32 && v.get<std::int64_t>() > 2147483647)
            r.fail(path + ".sizes." + n, "exceeds the i32 size_type (set \"size_type\": \"i64\")");
        c.sizes[n] = v.get<std::int64_t>();
    }
    for (auto it = sz.begin(); it != sz.end(); ++it)
        if (!names.count(it.key())) r.fail(path + ".sizes." + it.key(), "not a declared size");
}

/** A case's overrides of declared parameters. */
void read_case_params(const ManifestReader& r, const json& cj, const std::string& path, const Task& t, TaskCase& c) {
    if (!cj.contains("params")) return;
    const json& pj = cj.at("params");
    if (!pj.is_object()) r.fail(path + ".params", "expected an object of parameter values");
    for (auto it = pj.begin(); it != pj.end(); ++it) {
        bool known = std::any_of(t.params.begin(), t.params.end(), [&](const ParamSpec& p) { return p.name == it.key(); });
        if (!known) r.fail(path + ".params." + it.key(), "not a declared parameter");
        if (!it->is_number()) r.fail(path + ".params." + it.key(), "expected a number");
        c.params[it.key()] = it->get<double>();
    }
}

/** Shapes must be positive integers at this case's sizes. */
void check_case_shapes(const ManifestReader& r, const Task& t, const TaskCase& c) {
    for (std::size_t ti = 0; ti < t.tensors.size(); ++ti)
        for (std::size_t d = 0; d < t.tensors[ti].shape.size(); ++d) {
            std::map<std::string, double> vars;
            for (const auto& [k, v] : c.sizes) vars[k] = static_cast<double>(v);
            double v = t.tensors[ti].shape[d].eval(vars);
            if (!(v >= 1) || v != std::floor(v))
                r.fail(ManifestReader::index(ManifestReader::index("tensors", ti) + ".shape", d),
                       "evaluates to " + std::to_string(v) + " in case '" + c.name + "' (must be a positive integer)");
        }
}

/** One case at `path`; its name joins `case_names`. */
TaskCase read_case(const ManifestReader& r, const json& cj, const std::string& path, const Task& t,
                   const std::set<std::string>& names, std::set<std::string>& case_names) {
    if (!cj.is_object()) r.fail(path, "expected an object");
    r.check_keys(cj, path, {"name", "primary", "backends", "sizes", "params", "description"});
    TaskCase c;
    c.name = r.string_at(cj, "name", path, true);
    if (!case_names.insert(c.name).second) r.fail(path + ".name", "duplicate case '" + c.name + "'");
    if (cj.contains("primary")) {
        if (!cj.at("primary").is_boolean()) r.fail(path + ".primary", "expected true or false");
        c.primary = cj.at("primary").get<bool>();
    }
    c.backends = read_backends(r, r.array_at(cj, "backends", path, false), path + ".backends");
    read_case_sizes(r, cj, path, t, names, c);
    read_case_params(r, cj, path, t, c);
    check_case_shapes(r, t, c);
    return c;
}

/** The cases, then for each backend with a reference exactly one primary case and at least one validation case. */
void read_cases(const ManifestReader& r, const json& j, Task& t, const std::set<std::string>& names) {
    const json& cases = r.array_at(j, "cases", "", true);
    std::set<std::string> case_names;
    for (std::size_t i = 0; i < cases.size(); ++i)
        t.cases.push_back(read_case(r, cases[i], ManifestReader::index("cases", i), t, names, case_names));
    for (const auto& [backend, path] : t.references) {
        (void)path;
        int primaries = 0, validations = 0;
        for (const auto& c : t.cases)
            if (c.runs_on(backend)) (c.primary ? primaries : validations)++;
        std::string b(to_string(backend));
        if (primaries != 1)
            r.fail("cases", "the " + b + " backend needs exactly one primary case, found " + std::to_string(primaries));
        if (validations < 1)
            r.fail("cases", "the " + b + " backend needs at least one validation case at other sizes");
    }
}

}  // namespace

std::string_view to_string(Backend b) { return b == Backend::Cuda ? "cuda" : "host"; }

std::optional<Backend> backend_from_string(std::string_view s) {
    if (s == "cuda") return Backend::Cuda;
    if (s == "host") return Backend::Host;
    return std::nullopt;
}

bool TaskCase::runs_on(Backend b) const {
    return backends.empty() || std::find(backends.begin(), backends.end(), b) != backends.end();
}

Task load_task(const std::filesystem::path& dir_or_manifest) {
    namespace fs = std::filesystem;
    fs::path manifest = dir_or_manifest;
    std::error_code ec;
    if (fs::is_directory(manifest, ec)) manifest /= "task.json";
    ManifestReader r(manifest.string());
    const json j = read_manifest(r, manifest);

    Task t;
    t.manifest = fs::absolute(manifest).lexically_normal();
    t.dir = t.manifest.parent_path();
    read_identity(r, j, t);
    const std::set<std::string> names = read_sizes(r, j, t);
    // Tolerance (task-wide, outputs may override).
    t.tolerance = read_tolerance(r, r.require(j, "tolerance", ""), "tolerance");
    std::set<std::string> idents = names;  // sizes, tensors and parameters share one namespace
    read_tensors(r, j, t, names, idents);
    read_params(r, j, t, idents);
    read_work(r, j, t, names);
    read_rules(r, j, t);
    read_references(r, j, t);
    read_cases(r, j, t, names);
    if (j.contains("computation")) t.computation = computation_from_json(j.at("computation"), t);
    return t;
}

std::vector<std::filesystem::path> find_task_dirs(const std::filesystem::path& root) {
    namespace fs = std::filesystem;
    std::vector<fs::path> out;
    std::error_code ec;
    if (fs::is_regular_file(root / "task.json", ec)) return {root};
    if (!fs::is_directory(root, ec)) return out;
    for (auto it = fs::recursive_directory_iterator(root, fs::directory_options::skip_permission_denied, ec);
         it != fs::recursive_directory_iterator(); it.increment(ec)) {
        if (ec) break;
        if (it->is_regular_file(ec) && it->path().filename() == "task.json") out.push_back(it->path().parent_path());
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::optional<std::filesystem::path> resolve_task(const std::string& arg) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (fs::is_directory(arg, ec) || fs::is_regular_file(arg, ec)) return fs::path(arg);
    fs::path root = bundled_tasks_dir();
    if (root.empty()) return std::nullopt;
    if (fs::is_regular_file(root / arg / "task.json", ec)) return root / arg;
    for (const auto& dir : find_task_dirs(root))
        if (dir.filename() == arg) return dir;
    return std::nullopt;
}

}  // namespace kf
