// Finding KernelBench problems and ModelNew candidates on disk.
#include <algorithm>
#include <regex>
#include <set>

#include "kf/kernelbench.h"

namespace kf::kb {

namespace fs = std::filesystem;

std::string Problem::key() const { return "level" + std::to_string(level) + "/" + std::to_string(id) + "_" + name; }

fs::path level_dir(const fs::path& kb_root, int level) {
    if (level < 1) throw Error("KernelBench levels start at 1, got " + std::to_string(level));
    std::string sub = "level" + std::to_string(level);
    std::error_code ec;
    if (!fs::is_directory(kb_root, ec))
        throw Error("no KernelBench checkout at " + kb_root.string() + " (give the folder of a clone of KernelBench)");
    for (const fs::path& p : {kb_root / "KernelBench" / sub, kb_root / sub})
        if (fs::is_directory(p, ec)) return p;
    throw Error("no " + sub + " folder in " + kb_root.string() + " (looked for KernelBench/" + sub + " and " + sub + ")");
}

std::vector<Problem> list_problems(const fs::path& kb_root, int level) {
    fs::path dir = level_dir(kb_root, level);
    static const std::regex name_re(R"(^([0-9]+)_(.+)\.py$)");
    std::vector<Problem> out;
    for (const auto& e : fs::directory_iterator(dir)) {
        if (!e.is_regular_file()) continue;
        std::string fname = e.path().filename().string();
        std::smatch m;
        if (!std::regex_match(fname, m, name_re)) continue;
        Problem p;
        p.level = level;
        p.id = std::stoi(m[1].str());
        p.name = m[2].str();
        p.file = fs::absolute(e.path());
        out.push_back(std::move(p));
    }
    std::sort(out.begin(), out.end(), [](const Problem& a, const Problem& b) { return a.id < b.id; });
    return out;
}

Problem find_problem(const fs::path& kb_root, int level, int id) {
    for (auto& p : list_problems(kb_root, level))
        if (p.id == id) return p;
    throw Error("no problem " + std::to_string(id) + " in " + level_dir(kb_root, level).string() + " (files are named " +
                std::to_string(id) + "_<Name>.py)");
}

std::vector<int> parse_id_list(const std::string& spec) {
    static const std::regex item_re(R"(^\s*([0-9]+)\s*(?:-\s*([0-9]+)\s*)?$)");
    std::set<int> ids;
    std::size_t start = 0;
    if (spec.find_first_not_of(" \t") == std::string::npos) throw Error("empty problem list (e.g. 1-20,25)");
    while (start <= spec.size()) {
        std::size_t comma = spec.find(',', start);
        std::string item = spec.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        std::smatch m;
        if (!std::regex_match(item, m, item_re))
            throw Error("bad problem list '" + spec + "': '" + item + "' is not an id or a range like 1-20");
        int lo = std::stoi(m[1].str());
        int hi = m[2].matched ? std::stoi(m[2].str()) : lo;
        if (lo < 1 || hi < lo || hi - lo > 100000)
            throw Error("bad problem range '" + item + "' (ids start at 1, and a range goes up)");
        for (int i = lo; i <= hi; ++i) ids.insert(i);
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return {ids.begin(), ids.end()};
}

std::vector<fs::path> find_candidates(const fs::path& dir, const Problem& p) {
    std::vector<fs::path> out;
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) throw Error("no candidates folder " + dir.string());
    const std::string id = std::to_string(p.id);
    const std::regex own(R"(^)" + id + R"(_.*\.py$)");
    const std::regex kb_style(R"(^level_)" + std::to_string(p.level) + R"(_problem_)" + id + R"(_sample_[0-9]+_kernel\.py$)");
    auto scan = [&](const fs::path& d, bool kb_names) {
        if (!fs::is_directory(d, ec)) return;
        for (const auto& e : fs::directory_iterator(d)) {
            if (!e.is_regular_file()) continue;
            std::string f = e.path().filename().string();
            if (std::regex_match(f, own) || (kb_names && std::regex_match(f, kb_style))) out.push_back(fs::absolute(e.path()));
        }
    };
    scan(dir / ("level" + std::to_string(p.level)), false);
    scan(dir, true);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

}  // namespace kf::kb
