// kf::Member's JSON form, as the search state and the island model keep it.
#include "kf/member.h"

namespace kf {

using nlohmann::json;

void to_json(json& j, const Member& m) {
    j = {{"id", m.id},         {"source", m.source},   {"tunables", m.tunables}, {"family", m.family},
         {"expert", m.expert}, {"status", to_string(m.status)},   {"bound", m.bound},       {"fitness", m.fitness},
         {"island", m.island}, {"generation", m.generation}, {"parents", m.parents}};
}

void from_json(const json& j, Member& m) {
    m.id = j.value("id", std::int64_t{0});
    m.source = j.value("source", "");
    m.tunables = j.value("tunables", Assignment{});
    m.family = j.value("family", "");
    m.expert = j.value("expert", "");
    m.status = parse_status(j.value("status", "ok")).value_or(Status::RuntimeError);
    m.bound = j.value("bound", "");
    m.fitness = j.value("fitness", 0.0);
    m.island = j.value("island", 0);
    m.generation = j.value("generation", 0);
    m.parents = j.value("parents", std::vector<std::int64_t>{});
}

}  // namespace kf
