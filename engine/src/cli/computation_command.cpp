#include "computation_command.h"

#include <filesystem>
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "kf/error.h"
#include "kf/evaluator.h"
#include "kf/generic.h"
#include "kf/recognise.h"
#include "kf/task.h"
#include "task_arg.h"

namespace kf::cli {

namespace {

using nlohmann::json;
using nlohmann::ordered_json;

/**
 * Adds `computation` to the manifest's JSON, its other fields and their order kept, and
 * replaces the file in one rename: a crash leaves the old manifest or the new one.
 */
void write_into_manifest(const std::filesystem::path& manifest, const ordered_json& computation) {
    std::ifstream in(manifest);
    if (!in) throw Error("cannot read " + manifest.string());
    ordered_json m = ordered_json::parse(in, nullptr, false);
    if (m.is_discarded() || !m.is_object()) throw TaskError(manifest.string(), "", "not a JSON object");
    m["computation"] = computation;
    std::filesystem::path tmp = manifest;
    tmp += ".tmp";
    {
        std::ofstream out(tmp);
        out << m.dump(2) << "\n";
        out.flush();
        if (!out) throw Error("cannot write " + tmp.string());
    }
    std::filesystem::rename(tmp, manifest);
}

}  // namespace

int run_task_computation(const ComputationArgs& a) {
    Task t = load_task_arg(a.task);
    Recogniser which = Recogniser::Best;
    if (a.recogniser == "libclang") which = Recogniser::Libclang;
    else if (a.recogniser == "tokens") which = Recogniser::Tokens;
    else if (a.recogniser != "best") throw UsageError("--recogniser: best, libclang or tokens, not '" + a.recogniser + "'");
    if (a.write && t.computation)
        throw UsageError("the manifest of " + t.name + " already declares a computation; --write adds a derived one only to "
                         "a manifest without one");
    std::optional<Computation> c = a.derive ? std::nullopt : t.computation;
    std::string reason;
    if (!c) {
        Task bare = t;
        bare.computation.reset();
        Recognition r = recognise_reference(bare, Backend::Host, which);
        c = r.computation;
        reason = r.reason;
    }
    if (!c) {
        // The op-class templates have nothing to work from; the generic expert may still.
        const std::string generic = generic_summary(generic_kernels(t, Backend::Cuda));
        if (a.as_json)
            std::cout << json{{"task", t.name}, {"computation", nullptr}, {"reason", reason}, {"generic", generic}}.dump(2) << "\n";
        std::cerr << "kfoundry: " << reason << "\n" << "kfoundry: " << generic << "\n";
        return kExitError;
    }
    ordered_json j = computation_to_json(*c);
    // What is written must read back as the same computation.
    if (computation_from_json(json::parse(j.dump()), t).summary() != c->summary())
        throw Error("the computation does not read back as itself: " + j.dump());
    if (a.write) {
        j["description"] = c->origin;
        write_into_manifest(t.dir / "task.json", j);
    }
    if (a.as_json) {
        std::cout << ordered_json{{"task", t.name}, {"origin", c->origin}, {"summary", c->summary()}, {"computation", j}}.dump(2)
                  << "\n";
    } else {
        std::cout << c->origin << "\n" << c->summary() << "\n" << j.dump(2) << "\n";
        if (a.write) std::cout << "written into " << (t.dir / "task.json").string() << "\n";
    }
    return kExitOk;
}

}  // namespace kf::cli
