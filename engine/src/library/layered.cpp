// A project library read before the user library.
#include <set>

#include "kf/library.h"

namespace kf {

namespace {

std::optional<ExperienceLibrary> open_overlay(const std::filesystem::path& overlay) {
    if (overlay.empty()) return std::nullopt;
    return ExperienceLibrary::open(overlay);
}

}  // namespace

LayeredLibrary::LayeredLibrary(const std::filesystem::path& overlay, const std::filesystem::path& user)
    : overlay_(open_overlay(overlay)), user_(ExperienceLibrary::open(user)) {}

ExperienceLibrary& LayeredLibrary::layer(Layer which) {
    return which == Layer::Overlay && overlay_ ? *overlay_ : user_;
}

std::vector<Pattern> LayeredLibrary::patterns(const PatternQuery& q) const {
    std::vector<Pattern> out = overlay_ ? overlay_->patterns(q) : std::vector<Pattern>{};
    std::set<std::string> seen;
    for (const auto& p : out) seen.insert(p.name);
    for (auto& p : user_.patterns(q)) {
        if (q.limit > 0 && out.size() >= static_cast<std::size_t>(q.limit)) break;
        if (seen.count(p.name) == 0 && (!overlay_ || !overlay_->pattern_by_name(p.name))) out.push_back(std::move(p));
    }
    return out;
}

std::optional<Pattern> LayeredLibrary::pattern_by_name(const std::string& name) const {
    if (overlay_)
        if (auto p = overlay_->pattern_by_name(name)) return p;
    return user_.pattern_by_name(name);
}

std::vector<Insight> LayeredLibrary::insights(const InsightQuery& q) const {
    std::vector<Insight> out = overlay_ ? overlay_->insights(q) : std::vector<Insight>{};
    for (auto& in : user_.insights(q)) {
        if (q.limit > 0 && out.size() >= static_cast<std::size_t>(q.limit)) break;
        out.push_back(std::move(in));
    }
    return out;
}

}  // namespace kf
