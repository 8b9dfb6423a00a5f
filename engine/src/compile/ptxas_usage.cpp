// Reads the resource usage that `ptxas -v` prints per function. ptxas reports device
// functions too (their "Function properties" block, without a "Used N registers" line);
// only entry functions (kernels) are kept, since those are what the worker launches.
#include <algorithm>
#include <map>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "kf/compile.h"

namespace kf {

namespace {

struct Entry {
    ResourceUsage usage;
    bool is_entry = false;
};

/** The integer before `suffix` in `text` (e.g. "32" in "Used 32 registers"), or -1. */
int number_before(const std::string& text, const std::regex& suffix) {
    std::smatch m;
    if (!std::regex_search(text, m, suffix)) return -1;
    try {
        return std::stoi(m[1]);
    } catch (const std::exception&) {
        return -1;  // absurdly large: treat as missing rather than throw
    }
}

}  // namespace

std::vector<ResourceUsage> parse_ptxas_usage(std::string_view output) {
    static const std::regex compiling(R"(Compiling entry function '([^']+)')");
    static const std::regex properties(R"(Function properties for (\S+))");
    static const std::regex registers(R"((\d+) registers)");
    static const std::regex smem(R"((\d+) bytes smem)");
    static const std::regex cmem0(R"((\d+) bytes cmem\[0\])");
    static const std::regex stack_frame(R"((\d+) bytes stack frame)");
    static const std::regex cumulative_stack(R"((\d+) bytes cumulative stack size)");
    static const std::regex spill_stores(R"((\d+) bytes spill stores)");
    static const std::regex spill_loads(R"((\d+) bytes spill loads)");

    std::map<std::string, Entry> functions;
    std::vector<std::string> order;  // entry functions in the order ptxas compiled them
    std::string current;             // the function the next detail lines belong to

    auto select = [&](const std::string& name) -> Entry& {
        current = name;
        Entry& e = functions[name];
        e.usage.kernel = name;
        return e;
    };

    std::size_t start = 0;
    while (start < output.size()) {
        std::size_t nl = output.find('\n', start);
        std::string line(output.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start));
        start = nl == std::string_view::npos ? output.size() : nl + 1;

        std::smatch m;
        if (std::regex_search(line, m, compiling)) {
            Entry& e = select(m[1]);
            if (!e.is_entry) order.push_back(m[1]);
            e.is_entry = true;
            continue;
        }
        if (std::regex_search(line, m, properties)) {
            select(m[1]);
            continue;
        }
        if (current.empty()) continue;
        ResourceUsage& u = functions[current].usage;
        if (line.find("stack frame") != std::string::npos) {
            if (int v = number_before(line, stack_frame); v >= 0) u.stack_bytes = std::max(u.stack_bytes, v);
            if (int v = number_before(line, spill_stores); v >= 0) u.spill_store_bytes = v;
            if (int v = number_before(line, spill_loads); v >= 0) u.spill_load_bytes = v;
        } else if (line.find("ptxas info") != std::string::npos && line.find(" Used ") != std::string::npos) {
            // "Used 32 registers, used 1 barriers, 64 bytes cumulative stack size, 4096 bytes
            // smem, 400 bytes cmem[0]"; any field but the registers may be missing.
            if (int v = number_before(line, registers); v >= 0) u.registers = v;
            if (int v = number_before(line, smem); v >= 0) u.shared_bytes = v;
            if (int v = number_before(line, cmem0); v >= 0) u.constant_bytes = v;
            if (int v = number_before(line, cumulative_stack); v >= 0) u.stack_bytes = std::max(u.stack_bytes, v);
        }
    }

    std::vector<ResourceUsage> out;
    for (const auto& name : order) out.push_back(functions[name].usage);
    return out;
}

}  // namespace kf
