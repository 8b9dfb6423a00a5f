// Small conversions shared by the library's tables: timestamps, JSON columns.
#include <chrono>
#include <ctime>

#include "library_impl.h"

namespace kf::library_detail {

std::string now_iso() {
    std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

std::string to_json_text(const std::vector<std::string>& v) {
    return nlohmann::json(v).dump();
}

std::string to_json_text(const std::vector<double>& v) {
    return nlohmann::json(v).dump();
}

std::vector<std::string> strings_from_json_text(const std::string& s) {
    auto j = nlohmann::json::parse(s, nullptr, false);
    std::vector<std::string> out;
    if (j.is_array())
        for (const auto& e : j)
            if (e.is_string()) out.push_back(e.get<std::string>());
    return out;
}

std::vector<double> doubles_from_json_text(const std::string& s) {
    auto j = nlohmann::json::parse(s, nullptr, false);
    std::vector<double> out;
    if (j.is_array())
        for (const auto& e : j)
            if (e.is_number()) out.push_back(e.get<double>());
    return out;
}

}  // namespace kf::library_detail

namespace kf::library_detail {

void insert_improvement(sql::Database& db, const Improvement& imp) {
    db.prepare(
          "INSERT INTO improvements (op_class, bound_before, status_before, expert, change, gain, run_id, "
          "candidate_id, success, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
        .bind(1, imp.op_class)
        .bind(2, imp.bound_before)
        .bind(3, imp.status_before)
        .bind(4, imp.expert)
        .bind(5, imp.change)
        .bind(6, imp.gain)
        .bind(7, imp.run_id)
        .bind(8, imp.candidate_id)
        .bind(9, imp.success ? 1 : 0)
        .bind(10, now_iso())
        .run();
}

}  // namespace kf::library_detail
