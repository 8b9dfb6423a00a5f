#include "runs/engineevent.h"

#include "kf/search.h"
#include "paths.h"

namespace kfgui {

bool EngineEvent::isEvaluation() const {
    return kind == kf::EventKind::Evaluated || kind == kf::EventKind::Seeded;
}

EngineEvent toEngineEvent(const kf::SearchEvent& e) {
    EngineEvent out;
    out.kind = e.kind;
    out.island = e.island;
    out.member = e.member;
    out.message = fromUtf8(e.message);
    if (e.stop) out.stop = *e.stop;
    if (e.status) out.status = fromUtf8(std::string(kf::to_string(*e.status)));
    if (e.data.is_object()) {
        auto text = [&](const char* key) {
            auto it = e.data.find(key);
            return it != e.data.end() && it->is_string() ? fromUtf8(it->get<std::string>()) : QString();
        };
        auto number = [&](const char* key, double fallback) {
            auto it = e.data.find(key);
            return it != e.data.end() && it->is_number() ? it->get<double>() : fallback;
        };
        if (!e.status) out.status = text("status");
        out.expert = text("expert");
        out.fitness = number("fitness", 0);
        out.gain = number("gain", 0);
        if (out.kind == kf::EventKind::LlmUsage) {
            const auto totals = e.data.find("totals");
            if (totals != e.data.end() && totals->is_object()) {
                out.llmCalls = totals->value("calls", std::int64_t{0});
                out.llmInputTokens = totals->value("input_tokens", std::int64_t{0});
                out.llmOutputTokens = totals->value("output_tokens", std::int64_t{0});
                out.llmCost = totals->value("cost", 0.0);
            }
        }
    }
    if (out.kind == kf::EventKind::Seeded && out.expert.isEmpty()) out.expert = QStringLiteral("seed");
    return out;
}

}  // namespace kfgui
