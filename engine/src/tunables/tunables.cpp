// parse_tunables and instantiate: from annotated source to a TunableSpace and back.
#include "kf/tunables.h"

#include <algorithm>

#include "annotation.h"
#include "assignment_check.h"
#include "source_lines.h"

namespace kf {

using namespace tunables_detail;

namespace {

const char* kDeclarationShapes = "'#define NAME <int>' or '[static] constexpr int NAME = <int>;'";

void check_constraint_names(const TunableSpace& space) {
    for (const TunableConstraint& c : space.constraints)
        for (const std::string& name : c.expr.names())
            if (!space.find(name))
                throw TunableError(c.line, "constraint '" + c.text + "' names '" + name +
                                               "', which is not a declared tunable");
}

void check_defaults(const TunableSpace& space) {
    Assignment d = space.defaults();
    std::map<std::string, double> vars;
    for (const auto& [name, v] : d) vars[name] = static_cast<double>(v);
    for (const TunableConstraint& c : space.constraints) {
        std::string why;
        if (!constraint_holds(c, vars, &why))
            throw TunableError(c.line, "the values written in the source (" + to_string(d) + ") " + why);
    }
}

}  // namespace

TunableSpace parse_tunables(std::string_view source) {
    TunableSpace space;
    for (const SourceLine& line : split_lines(source)) {
        CommentSplit split = split_comment(line.text);
        if (!split.has_comment) continue;
        auto annotation = parse_annotation(split.comment, line.number);
        if (!annotation) continue;

        if (annotation->kind == Annotation::Constraint) {
            TunableConstraint c;
            c.text = annotation->constraint;
            c.line = line.number;
            try {
                c.expr = Expr::parse(c.text);
            } catch (const ExprError& e) {
                throw TunableError(line.number, std::string("constraint does not parse: ") + e.what());
            }
            space.constraints.push_back(std::move(c));
            continue;
        }

        auto decl = find_declaration(split.code, line.number);
        if (!decl)
            throw TunableError(line.number, "'@kf tunable' needs a declaration on the same line: " +
                                                std::string(kDeclarationShapes));
        if (const Tunable* earlier = space.find(decl->name))
            throw TunableError(line.number, "tunable " + decl->name + " is already declared on line " +
                                                std::to_string(earlier->line));
        const auto& values = annotation->values;
        if (std::find(values.begin(), values.end(), decl->value) == values.end())
            throw TunableError(line.number, "the value written for " + decl->name + " (" +
                                                std::to_string(decl->value) +
                                                ") is its default and must be one of its values");
        space.params.push_back({decl->name, values, decl->value, line.number});
    }
    check_constraint_names(space);
    check_defaults(space);
    return space;
}

std::string instantiate(std::string_view source, const TunableSpace& space, const Assignment& a) {
    if (auto problem = find_problem(space, a)) throw TunableError(problem->line, problem->reason);

    auto lines = split_lines(source);
    struct Edit {
        std::size_t pos, len;
        std::string text;
    };
    std::vector<Edit> edits;
    for (const Tunable& t : space.params) {
        std::optional<Declaration> decl;
        if (t.line >= 1 && static_cast<std::size_t>(t.line) <= lines.size()) {
            const SourceLine& line = lines[static_cast<std::size_t>(t.line - 1)];
            decl = find_declaration(split_comment(line.text).code, t.line);
            if (decl && decl->name == t.name)
                edits.push_back({line.offset + decl->value_pos, decl->value_len, std::to_string(a.at(t.name))});
        }
        if (!decl || decl->name != t.name)
            throw TunableError(t.line, "the source does not declare tunable " + t.name +
                                           " on this line; was the space parsed from another source?");
    }

    // Apply from the end so that earlier offsets stay valid.
    std::sort(edits.begin(), edits.end(), [](const Edit& x, const Edit& y) { return x.pos > y.pos; });
    std::string out(source);
    for (const Edit& e : edits) out.replace(e.pos, e.len, e.text);
    return out;
}

std::string apply_tunables(std::string_view source, const Assignment& chosen) {
    TunableSpace space = parse_tunables(source);
    if (chosen.empty()) return std::string(source);
    Assignment full = space.defaults();
    for (const auto& [name, value] : chosen) full[name] = value;
    return instantiate(source, space, full);
}

}  // namespace kf
