// The generic expert's plan: which loops of the reference may run in parallel, checked on
// the loop-nest model without knowing the op. A loop's iterations may be spread over threads
// when no two iterations touch one element of a tensor that either writes (each written
// tensor is accessed at `K * v + R`, the same K everywhere, R spanning less than K in every
// case of the task), no scalar declared outside it is assigned in it, and it neither returns
// nor breaks. Tensors only added to (`+=`) may instead be updated atomically.
#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>

#include "generic_parts.h"
#include "recognise_parts.h"

namespace kf::generic {

namespace {

using ast::Poly;
using Env = std::map<std::string, double>;

[[noreturn]] void unsupported(const std::string& why, int line) {
    throw Unsupported(why + (line > 0 ? " (line " + std::to_string(line) + ")" : ""));
}

/** A numeric value of an integer or floating expression in `env`; null when a name has no value. */
std::optional<double> evaluate(const ExprPtr& e, const Env& env) {
    auto arg = [&](int i) { return evaluate(e->args[static_cast<std::size_t>(i)], env); };
    switch (e->kind) {
        case Expr::Kind::Number:
            return e->value;
        case Expr::Kind::Name: {
            auto it = env.find(e->text);
            return it == env.end() ? std::nullopt : std::optional<double>(it->second);
        }
        case Expr::Kind::Unary: {
            auto a = arg(0);
            if (!a) return std::nullopt;
            return e->text == "-" ? -*a : (*a == 0 ? 1.0 : 0.0);
        }
        case Expr::Kind::Binary: {
            auto a = arg(0), b = arg(1);
            if (!a || !b) return std::nullopt;
            const std::string& op = e->text;
            const bool whole = *a == std::floor(*a) && *b == std::floor(*b) && !e->args[0]->converted &&
                               !e->args[1]->converted;
            if (op == "+") return *a + *b;
            if (op == "-") return *a - *b;
            if (op == "*") return *a * *b;
            if (op == "/") {
                if (*b == 0) return std::nullopt;
                return whole ? std::trunc(*a / *b) : *a / *b;
            }
            if (op == "%") {
                if (*b == 0 || !whole) return std::nullopt;
                return std::fmod(*a, *b);
            }
            if (op == "<") return *a < *b ? 1.0 : 0.0;
            if (op == "<=") return *a <= *b ? 1.0 : 0.0;
            if (op == ">") return *a > *b ? 1.0 : 0.0;
            if (op == ">=") return *a >= *b ? 1.0 : 0.0;
            if (op == "==") return *a == *b ? 1.0 : 0.0;
            if (op == "!=") return *a != *b ? 1.0 : 0.0;
            if (op == "&&") return (*a != 0 && *b != 0) ? 1.0 : 0.0;
            if (op == "||") return (*a != 0 || *b != 0) ? 1.0 : 0.0;
            return std::nullopt;
        }
        case Expr::Kind::Call: {
            if (e->args.size() != 2 || (e->text != "max" && e->text != "min")) return std::nullopt;
            auto a = arg(0), b = arg(1);
            if (!a || !b) return std::nullopt;
            return e->text == "max" ? std::max(*a, *b) : std::min(*a, *b);
        }
        case Expr::Kind::Select: {
            auto c = arg(0);
            if (!c) return std::nullopt;
            return *c != 0 ? arg(1) : arg(2);
        }
        case Expr::Kind::Cast: {
            auto a = arg(0);
            if (!a) return std::nullopt;
            return std::trunc(*a);
        }
        case Expr::Kind::Index:
            return std::nullopt;
    }
    return std::nullopt;
}

/** True when e reads any array. */
bool reads_array(const ExprPtr& e) {
    if (e->kind == Expr::Kind::Index) return true;
    for (const auto& a : e->args)
        if (reads_array(a)) return true;
    return false;
}

bool mentions(const ExprPtr& e, const std::string& n) { return e && ast::mentions(e, n); }

/** A loop inside the nest: its variable's range is evaluated from these. */
struct LoopInfo {
    const Stmt* loop = nullptr;
    int depth = 0;
};

/** An access of a task tensor (through a row pointer) seen in the nest. */
struct Access {
    std::string tensor;
    std::optional<Poly> index;
    bool write = false;
    std::string op;                  ///< the assignment's operator, for a write
    std::string name;                ///< the array as written (the tensor, or a pointer into it)
    std::vector<std::string> loops;  ///< the loop variables around it, outermost first
    int line = 0;
    /** A local array's element (the tensor is the array's name): private to the iteration that declares it. */
    bool local = false;
};

/** Facts of a block of the nest, gathered in one walk. */
struct Facts {
    std::vector<Access> accesses;
    std::map<std::string, LoopInfo> loops;      ///< by variable
    std::set<std::string> declared;             ///< names declared inside (private to an iteration)
    std::vector<const Stmt*> scalar_writes;     ///< assignments to names
    std::vector<const Stmt*> opaque;            ///< statements kept as written
    std::vector<std::pair<const Stmt*, int>> exits;  ///< break/return and their loop depth (0: the block's own level)
};

/**
 * The declarations in scope around a walked block: kf_solve's top level and the levels of the
 * loops around it, before it, with the names assigned anywhere in those scopes (whose
 * initialisers are then not their values).
 */
struct Around {
    std::vector<const Stmt*> decls;
    std::set<std::string> reassigned;
};

class Walker {
public:
    Walker(const std::set<std::string>& tensors, Facts& f) : tensors_(tensors), f_(f) {}

    void block(const Block& b, int depth) {
        for (const Stmt& st : b) stmt(st, depth);
    }

    /**
     * The names an enclosing scope declares before the block: its pointers into the tensors,
     * its integer definitions and its arrays, so that accesses through them are checked.
     */
    void enclose(const Around& around) {
        const std::set<std::string>* inner = reassigned_;
        reassigned_ = &around.reassigned;
        for (const Stmt* st : around.decls) {
            if (st->kind == Stmt::Kind::Opaque) {
                outer_locals_.insert(st->declared.begin(), st->declared.end());
                continue;
            }
            forget(st->var);
            if (st->type == Stmt::Type::Array) {
                outer_locals_.insert(st->var);
            } else if (st->type == Stmt::Type::Pointer && st->init) {
                alias(*st);
            } else if (st->type == Stmt::Type::Integer && st->init && !assigned_later(st->var)) {
                if (auto p = ast::to_poly(st->init, scope_)) scope_.ilets[st->var] = *p;
            }
        }
        reassigned_ = inner;
    }

private:
    void stmt(const Stmt& st, int depth) {
        line_ = st.line;
        switch (st.kind) {
            case Stmt::Kind::For:
                f_.loops[st.var] = {&st, depth};
                f_.declared.insert(st.var);
                forget(st.var);
                expr(st.start);
                expr(st.bound);
                loops_.push_back(st.var);
                block(st.body, depth + 1);
                loops_.pop_back();
                return;
            case Stmt::Kind::Decl:
                f_.declared.insert(st.var);
                if (st.init && st.type != Stmt::Type::Array) expr(st.init);
                forget(st.var);
                if (st.type == Stmt::Type::Array) locals_.insert(st.var);
                if (st.type == Stmt::Type::Pointer && st.init) {
                    if (assigned_later(st.var)) unknown_alias(st);
                    else alias(st);
                }
                if (st.type == Stmt::Type::Integer && st.init && !assigned_later(st.var)) {
                    if (auto p = ast::to_poly(st.init, scope_)) scope_.ilets[st.var] = *p;
                }
                return;
            case Stmt::Kind::Assign:
                expr(st.value);
                if (st.target->kind == Expr::Kind::Name) {
                    f_.scalar_writes.push_back(&st);
                } else {
                    expr(st.target->args[0]);
                    record(st.target, true, st.op, st.line);
                    if (st.op != "=") record(st.target, false, "", st.line);
                }
                return;
            case Stmt::Kind::If:
                expr(st.cond);
                block(st.body, depth);
                block(st.else_body, depth);
                return;
            case Stmt::Kind::Return:
            case Stmt::Kind::Break:
                f_.exits.emplace_back(&st, depth);
                return;
            case Stmt::Kind::Continue:
                return;
            case Stmt::Kind::Opaque:
                f_.opaque.push_back(&st);
                // What it declares is the iteration's own, whatever the model cannot say of it.
                for (const auto& n : st.declared) {
                    f_.declared.insert(n);
                    forget(n);
                    locals_.insert(n);
                }
                return;
        }
    }

    void expr(const ExprPtr& e) {
        if (!e) return;
        if (e->kind == Expr::Kind::Index) record(e, false, "", 0);
        for (const auto& a : e->args) expr(a);
    }

    /**
     * A row pointer into a tensor, `p = x + off`: accesses through p are accesses of x. A
     * pointer into a local array is that array; any other pointer cannot be followed.
     */
    void alias(const Stmt& st) {
        const ExprPtr& e = st.init;
        std::string base;
        std::optional<Poly> off;
        if (e->kind == Expr::Kind::Name) {
            base = e->text;
            off = Poly{};
        } else if (e->kind == Expr::Kind::Binary && (e->text == "+" || e->text == "-")) {
            int side = e->args[0]->kind == Expr::Kind::Name && (resolves(e->args[0]->text) || local(e->args[0]->text)) ? 0 : 1;
            if (e->text == "-") side = 0;
            if (e->args[side]->kind != Expr::Kind::Name) return unknown_alias(st);
            base = e->args[side]->text;
            off = ast::to_poly(e->args[1 - side], scope_);
            if (off && e->text == "-") off = ast::add(Poly{}, *off, -1);
        }
        if (local(base)) {
            local_aliases_[st.var] = local_aliases_.count(base) ? local_aliases_.at(base) : base;
            return;
        }
        if (!resolves(base)) return unknown_alias(st);
        auto [tensor, at] = resolve(base);
        aliases_[st.var] = {tensor, off && at ? std::optional<Poly>(ast::add(*at, *off)) : std::nullopt};
    }

    void unknown_alias(const Stmt& st) { aliases_[st.var] = {"?" + st.var, std::nullopt}; }

    /** A name declared again: what an outer declaration of it said no longer holds. */
    void forget(const std::string& n) {
        aliases_.erase(n);
        local_aliases_.erase(n);
        locals_.erase(n);
        outer_locals_.erase(n);
        scope_.ilets.erase(n);
    }

    bool resolves(const std::string& n) const {
        return !local(n) && (tensors_.count(n) || aliases_.count(n));
    }

    /** A local array (or a pointer into one), declared in the walked block or around it. */
    bool local(const std::string& n) const {
        return locals_.count(n) || outer_locals_.count(n) || local_aliases_.count(n);
    }

    std::pair<std::string, std::optional<Poly>> resolve(const std::string& n) const {
        if (auto a = aliases_.find(n); a != aliases_.end()) return a->second;
        return {n, Poly{}};
    }

    /**
     * An access of a tensor (through its pointers) or of a local array. A name that is neither,
     * nor declared as an array, is a pointer the check cannot follow (`?name`).
     */
    void record(const ExprPtr& e, bool write, const std::string& op, int line) {
        Access a;
        if (local(e->text)) {
            a.tensor = local_aliases_.count(e->text) ? local_aliases_.at(e->text) : e->text;
            a.local = true;
        } else if (resolves(e->text)) {
            auto [tensor, base] = resolve(e->text);
            a.tensor = tensor;
            if (base)
                if (auto p = ast::to_poly(e->args[0], scope_)) a.index = ast::add(*base, *p);
        } else {
            a.tensor = "?" + e->text;
        }
        a.write = write;
        a.op = op;
        a.name = e->text;
        a.loops = loops_;
        a.line = line ? line : line_;
        f_.accesses.push_back(std::move(a));
    }

    /** Whether a name is assigned after its declaration (then its value is not its initialiser). */
    bool assigned_later(const std::string& n) const { return reassigned_ && reassigned_->count(n); }

public:
    const std::set<std::string>* reassigned_ = nullptr;

private:
    const std::set<std::string>& tensors_;
    Facts& f_;
    ast::Scope scope_;
    std::map<std::string, std::pair<std::string, std::optional<Poly>>> aliases_;
    std::set<std::string> locals_;        ///< arrays declared in the walked block (and names an opaque statement declares)
    std::set<std::string> outer_locals_;  ///< arrays declared around it
    std::map<std::string, std::string> local_aliases_;  ///< pointer -> the local array it points into
    std::vector<std::string> loops_;
    int line_ = 0;  ///< the statement walked
};

/** Names assigned anywhere in a block (scalars and opaque statements' targets). */
void collect_assigned(const Block& b, std::set<std::string>& out) {
    for (const Stmt& st : b) {
        if (st.kind == Stmt::Kind::Assign && st.target->kind == Expr::Kind::Name) out.insert(st.target->text);
        if (st.kind == Stmt::Kind::Opaque) out.insert(st.assigned.begin(), st.assigned.end());
        collect_assigned(st.body, out);
        collect_assigned(st.else_body, out);
    }
}

/** The facts of a block, the declarations `around` it in scope. */
Facts gather(const Block& b, const std::set<std::string>& tensors, const Around& around) {
    Facts f;
    std::set<std::string> reassigned;
    collect_assigned(b, reassigned);
    Walker w(tensors, f);
    w.enclose(around);
    w.reassigned_ = &reassigned;
    w.block(b, 0);
    return f;
}

/**
 * The declarations of `b` in scope at `stop` (a statement of b or of an if inside it, at b's
 * level), added to `around`; false when stop is not there.
 */
bool declarations_before(const Block& b, const Stmt* stop, Around& around) {
    for (const Stmt& st : b) {
        if (&st == stop) return true;
        if (st.kind == Stmt::Kind::Decl || (st.kind == Stmt::Kind::Opaque && !st.declared.empty()))
            around.decls.push_back(&st);
        if (st.kind == Stmt::Kind::If) {
            Around inside = around;
            if (declarations_before(st.body, stop, inside) || declarations_before(st.else_body, stop, inside)) {
                around = inside;
                return true;
            }
        }
    }
    return false;
}

/** `around` with the declarations of `b` before `stop` and the names b assigns. */
Around around_in(Around around, const Block& b, const Stmt* stop) {
    declarations_before(b, stop, around);
    collect_assigned(b, around.reassigned);
    return around;
}

/** The coefficient of v in p (a polynomial free of v), and p without it; null when p is not affine in v. */
std::optional<std::pair<Poly, Poly>> split_affine(const Poly& p, const std::string& v) {
    Poly k, rest;
    for (const auto& [m, c] : p) {
        long long count = std::count(m.begin(), m.end(), v);
        if (count == 0) {
            rest[m] = c;
        } else if (count == 1) {
            ast::Monomial without = m;
            without.erase(std::find(without.begin(), without.end(), v));
            k[without] = c;
        } else {
            return std::nullopt;
        }
    }
    return std::make_pair(k, rest);
}

std::optional<double> eval_poly(const Poly& p, const Env& env) {
    double sum = 0;
    for (const auto& [m, c] : p) {
        double term = static_cast<double>(c);
        for (const auto& n : m) {
            auto it = env.find(n);
            if (it == env.end()) return std::nullopt;
            term *= it->second;
        }
        sum += term;
    }
    return sum;
}

/** The values a loop variable takes in env: [lowest, highest]; null when its bounds do not evaluate or it never runs. */
std::optional<std::pair<double, double>> loop_range(const Stmt& loop, const Env& env) {
    auto s = evaluate(loop.start, env), b = evaluate(loop.bound, env);
    if (!s || !b) return std::nullopt;
    const double step = static_cast<double>(loop.step);
    if (step > 0) {
        if (*b <= *s) return std::nullopt;
        return std::make_pair(*s, *s + std::floor((*b - 1 - *s) / step) * step);
    }
    if (*b >= *s) return std::nullopt;
    return std::make_pair(*s + std::floor((*b + 1 - *s) / step) * step, *s);
}

/** [min, max] of an affine polynomial over the loop variables' ranges (others from env); null if not affine or unknown. */
std::optional<std::pair<double, double>> poly_range(const Poly& p, const Env& env,
                                                    const std::map<std::string, std::pair<double, double>>& ranges) {
    double lo = 0, hi = 0;
    for (const auto& [m, c] : p) {
        double k = static_cast<double>(c);
        std::string var;
        for (const auto& n : m) {
            if (ranges.count(n)) {
                if (!var.empty()) return std::nullopt;  // a product of two loop variables
                var = n;
                continue;
            }
            auto it = env.find(n);
            if (it == env.end()) return std::nullopt;
            k *= it->second;
        }
        if (var.empty()) {
            lo += k;
            hi += k;
            continue;
        }
        auto [a, b] = ranges.at(var);
        lo += std::min(k * a, k * b);
        hi += std::max(k * a, k * b);
    }
    return std::make_pair(lo, hi);
}

/** The task's cases as environments of sizes and params, with the top-level scalars that evaluate. */
std::vector<Env> case_envs(const Task& task, const Block& body) {
    std::vector<Env> envs;
    for (const auto& c : task.cases) {
        Env env = task.variables(c);
        for (const auto& p : task.params) env[p.name] = task.param_value(p, c);
        for (const Stmt& st : body) {
            if (st.kind == Stmt::Kind::For) break;
            if (st.kind == Stmt::Kind::Decl && st.init && st.type != Stmt::Type::Array)
                if (auto v = evaluate(st.init, env)) env[st.var] = *v;
        }
        envs.push_back(std::move(env));
    }
    return envs;
}

struct Context {
    const Task& task;
    std::set<std::string> tensors, outputs;
    std::vector<Env> envs;
    std::set<std::string> top;  ///< names declared at kf_solve's top level and its parameters
    const Block* body = nullptr;  ///< kf_solve's body
};

/** The declarations of kf_solve's top level in scope at its loop `loop`. */
Around top_around(const Context& cx, const Stmt& loop) { return around_in({}, *cx.body, &loop); }

std::string opaque_what(const Stmt& st) {
    std::string w = st.why;
    return w.empty() ? "a statement kept as written" : w;
}

/**
 * Why an iteration of `loop` leaves it or touches what others share (exits, outer scalars and
 * local arrays, opaque statements, pointers it cannot follow); empty when none.
 */
std::string escape_why(const Context& cx, const Stmt& loop, const Facts& f) {
    const std::string& v = loop.var;
    for (const auto& [st, depth] : f.exits) {
        if (st->kind == Stmt::Kind::Return) return "it returns from kf_solve inside the loop over " + v + " (line " + std::to_string(st->line) + ")";
        if (depth == 0) return "it breaks out of the loop over " + v + " (line " + std::to_string(st->line) + ")";
    }
    for (const Stmt* st : f.scalar_writes)
        if (!f.declared.count(st->target->text))
            return "it assigns " + st->target->text + ", declared outside the loop over " + v + ", in every iteration (line " +
                   std::to_string(st->line) + ")";
    for (const Stmt* st : f.opaque) {
        for (const auto& n : st->assigned)
            if (!f.declared.count(n))
                return "it keeps " + opaque_what(*st) + " as written, and that assigns " + n + ", declared outside the loop over " + v;
        for (const auto& n : st->names)
            if (cx.outputs.count(n))
                return "it keeps " + opaque_what(*st) + " as written, and its accesses of " + n + " cannot be checked";
    }
    // Local arrays: private to the iteration that declares them; one declared outside is shared.
    // A name that is neither a tensor (or a pointer into one) nor a local array cannot be checked.
    for (const auto& a : f.accesses) {
        if (a.local && a.write && !f.declared.count(a.tensor))
            return "it writes the local array " + a.tensor + ", declared outside the loop over " + v + ", in every iteration (line " +
                   std::to_string(a.line) + ")";
        if (!a.local && a.tensor.rfind('?', 0) == 0)
            return std::string("it ") + (a.write ? "writes" : "reads") + " through " + a.tensor.substr(1) +
                   ", a pointer it cannot follow (line " + std::to_string(a.line) + ")";
    }
    return {};
}

/** True when a tensor's accesses only add to it (+=, -=; the walker's read of a compound write is part of it). */
bool only_added_to(const std::vector<const Access*>& acc) {
    bool only_added = true;
    for (const Access* a : acc) {
        if (a->write && a->op != "+=" && a->op != "-=") only_added = false;
        if (!a->write) {
            bool paired = std::any_of(acc.begin(), acc.end(), [&](const Access* w) {
                return w->write && w->line == a->line && w->index == a->index && (w->op == "+=" || w->op == "-=");
            });
            if (!paired) only_added = false;
        }
    }
    return only_added;
}

/** A tensor's accesses as K * v + R, one K for all (into `k`), each R into `rests`; why not, empty when they are. */
std::string common_stride(const std::string& t, const std::vector<const Access*>& acc, const std::string& v,
                          std::optional<Poly>& k, std::vector<std::pair<const Access*, Poly>>& rests) {
    for (const Access* a : acc) {
        if (!a->index) return t + " is accessed at an index that is not an integer expression of the loops (line " + std::to_string(a->line) + ")";
        auto split = split_affine(*a->index, v);
        if (!split) return t + "'s index is not linear in " + v + " (line " + std::to_string(a->line) + ")";
        if (k && *k != split->first)
            return t + " is accessed with different strides along " + v + " (line " + std::to_string(a->line) + ")";
        k = split->first;
        rests.emplace_back(a, split->second);
    }
    return {};
}

/**
 * Whether the offsets from K * v (`rests`), spanning K * step or more, still keep the
 * iterations of `loop` apart in `env`: their terms in other loops' variables are multiples of
 * one pitch M, their constant parts span less than `stride` (|K| * step), and K * v with
 * those constants spans less than M. A loop down a column, y[r * cols + c] over c < cols: two
 * iterations' indices differ by K * (v1 - v2) plus less than a stride, which no multiple of M
 * but 0 can be, and 0 it is not.
 */
bool pitched(const std::vector<std::pair<const Access*, Poly>>& rests, const Env& env, const Facts& f, const Stmt& loop,
             double stride) {
    auto range = loop_range(loop, env);
    if (!range) return false;
    long long pitch = 0;
    double lo = INFINITY, hi = -INFINITY;
    for (const auto& [a, rest] : rests) {
        double fixed = 0;
        for (const auto& [m, c] : rest) {
            double k = static_cast<double>(c);
            bool varies = false;
            for (const auto& n : m) {
                if (f.loops.count(n) && !env.count(n)) {
                    varies = true;
                    continue;
                }
                auto it = env.find(n);
                if (it == env.end()) return false;
                k *= it->second;
            }
            if (!varies) {
                fixed += k;
                continue;
            }
            if (k != std::trunc(k) || std::fabs(k) > 9e15) return false;
            pitch = std::gcd(pitch, static_cast<long long>(std::fabs(k)));
        }
        lo = std::min(lo, fixed);
        hi = std::max(hi, fixed);
    }
    if (pitch == 0 || lo > hi || hi - lo >= stride) return false;
    const double span = stride / std::fabs(static_cast<double>(loop.step)) * (range->second - range->first);
    return span + (hi - lo) < static_cast<double>(pitch);
}

/**
 * Why two iterations of `loop` may access one element of t, in some case of the task: the
 * accesses' offsets from K * v must span less than K * step (the loops in `held` at their
 * start), or keep the iterations apart by a pitch (pitched()).
 */
std::string overlap_why(const Context& cx, const Stmt& loop, const Facts& f, const std::vector<const Stmt*>& held,
                        const std::string& t, const Poly& k, const std::vector<std::pair<const Access*, Poly>>& rests) {
    const std::string& v = loop.var;
    for (const Env& base : cx.envs) {
        Env env = base;
        for (const Stmt* h : held)
            if (auto s0 = evaluate(h->start, env)) env[h->var] = *s0;
        auto kv = eval_poly(k, env);
        double lo = INFINITY, hi = -INFINITY;
        for (const auto& [a, rest] : rests) {
            std::map<std::string, std::pair<double, double>> ranges;
            bool runs = true, known = kv.has_value();
            for (const auto& lv : a->loops) {
                auto r = loop_range(*f.loops.at(lv).loop, env);
                if (!r) {
                    known = known && evaluate(f.loops.at(lv).loop->bound, env).has_value() &&
                            evaluate(f.loops.at(lv).loop->start, env).has_value();
                    runs = false;  // a loop that never runs in this case: the access does not happen
                    break;
                }
                ranges[lv] = *r;
            }
            auto r = known && runs ? poly_range(rest, env, ranges) : std::nullopt;
            if (!known || (runs && !r))
                return t + "'s index " + ast::poly_text(*a->index) + " cannot be evaluated in every case (line " +
                       std::to_string(a->line) + ")";
            if (!runs) continue;
            lo = std::min(lo, r->first);
            hi = std::max(hi, r->second);
        }
        if (lo > hi) continue;
        const double stride = std::fabs(*kv * static_cast<double>(loop.step));
        if (stride == 0 || (hi - lo >= stride && !pitched(rests, env, f, loop, stride))) {
            std::string why = "two iterations of the loop over " + v + " may access one element of " + t;
            for (const auto& [a, rest] : rests)
                if (a->write) {
                    why += " (line " + std::to_string(a->line) + ")";
                    break;
                }
            return why;
        }
    }
    return {};
}

/**
 * Why the iterations of `loop` may not run in parallel (empty when they may), the loops in
 * `held` (outer ones of a collapsed chain) held at their start. `atomics` receives the
 * tensors only added to, which the kernel then updates atomically.
 */
std::string parallel_why(const Context& cx, const Stmt& loop, const Facts& f, const std::vector<const Stmt*>& held,
                         std::set<std::string>& atomics) {
    if (std::string why = escape_why(cx, loop, f); !why.empty()) return why;
    // Written tensors: each access at K * v + R, one K, R spanning less than K * step.
    std::map<std::string, std::vector<const Access*>> by_tensor;
    std::set<std::string> written;
    for (const auto& a : f.accesses) {
        if (a.local) continue;
        by_tensor[a.tensor].push_back(&a);
        if (a.write) written.insert(a.tensor);
    }
    for (const auto& t : written) {
        const auto& acc = by_tensor[t];
        std::optional<Poly> k;
        std::vector<std::pair<const Access*, Poly>> rests;  // each access's index less K * v
        std::string why = common_stride(t, acc, loop.var, k, rests);
        if (why.empty() && k) why = overlap_why(cx, loop, f, held, t, *k, rests);
        if (why.empty()) continue;
        if (only_added_to(acc)) {
            // The tensor, and the pointers into it its additions are written through.
            atomics.insert(t);
            for (const Access* a : acc)
                if (a->write) atomics.insert(a->name);
            continue;
        }
        return why;
    }
    return {};
}

bool is_name(const ExprPtr& e, const std::string& n) { return e && e->kind == Expr::Kind::Name && e->text == n; }

/** The combine of a reduction update of s (s += e, s = max(s, e), if (e > s) s = e...), empty when st is none. */
std::string reduction_combine(const Stmt& st, const std::string& s) {
    if (st.kind == Stmt::Kind::Assign && is_name(st.target, s)) {
        if (st.op == "+=" || st.op == "-=") return mentions(st.value, s) ? "" : "sum";
        if (st.op == "*=") return mentions(st.value, s) ? "" : "prod";
        if (st.op != "=") return "";
        const ExprPtr& v = st.value;
        if ((v->kind == Expr::Kind::Call && (v->text == "max" || v->text == "min") && v->args.size() == 2) ||
            (v->kind == Expr::Kind::Binary && (v->text == "+" || v->text == "*"))) {
            int side = is_name(v->args[0], s) ? 0 : is_name(v->args[1], s) ? 1 : -1;
            if (side < 0 || mentions(v->args[1 - side], s)) return "";
            if (v->kind == Expr::Kind::Call) return v->text;
            return v->text == "+" ? "sum" : "prod";
        }
        return "";
    }
    // if (e > s) s = e;  (or s < e; >= and <= alike): a max; the other way round a min.
    if (st.kind == Stmt::Kind::If && st.else_body.empty() && st.body.size() == 1 && st.cond->kind == Expr::Kind::Binary &&
        st.body[0].kind == Stmt::Kind::Assign && st.body[0].op == "=" && is_name(st.body[0].target, s)) {
        const std::string& op = st.cond->text;
        const ExprPtr& e = st.body[0].value;
        if (mentions(e, s)) return "";
        const std::string et = nest::to_text(e);
        const ExprPtr &l = st.cond->args[0], &r = st.cond->args[1];
        const bool greater = op == ">" || op == ">=", less = op == "<" || op == "<=";
        if (!greater && !less) return "";
        if (is_name(r, s) && nest::to_text(l) == et) return greater ? "max" : "min";
        if (is_name(l, s) && nest::to_text(r) == et) return less ? "max" : "min";
    }
    return "";
}

/** Every statement (at any depth) of a block that assigns s; and whether s is read elsewhere. */
void updates_of(const Block& b, const std::string& s, std::vector<const Stmt*>& out, bool& read_elsewhere) {
    for (const Stmt& st : b) {
        if (!reduction_combine(st, s).empty()) {
            out.push_back(&st);
            continue;
        }
        if (st.kind == Stmt::Kind::Assign && is_name(st.target, s)) {
            out.push_back(&st);
            continue;
        }
        auto reads = [&](const ExprPtr& e) { return mentions(e, s); };
        if ((st.kind == Stmt::Kind::Assign && (reads(st.value) || reads(st.target))) ||
            (st.kind == Stmt::Kind::Decl && reads(st.init)) || reads(st.cond) || reads(st.start) || reads(st.bound))
            read_elsewhere = true;
        if (st.kind == Stmt::Kind::Opaque && std::count(st.names.begin(), st.names.end(), s)) read_elsewhere = true;
        updates_of(st.body, s, out, read_elsewhere);
        updates_of(st.else_body, s, out, read_elsewhere);
    }
}

/** The scalars of the row (declared at its level) with their C types. */
void row_scalars(const Block& b, std::map<std::string, std::string>& out) {
    for (const Stmt& st : b) {
        if (st.kind == Stmt::Kind::Decl && st.type != Stmt::Type::Array && st.type != Stmt::Type::Pointer)
            out[st.var] = st.type_name;
        if (st.kind == Stmt::Kind::If) {
            row_scalars(st.body, out);
            row_scalars(st.else_body, out);
        }
    }
}

/**
 * Plans a group of threads per iteration of the outer loop: every loop at the row's level (in
 * its ifs too) spread over the group, each either parallel along the row or reducing into the
 * row's scalars. Empty when it may, else why not.
 */
std::string plan_rows(const Context& cx, const Stmt& outer, NestPlan& plan) {
    std::map<std::string, std::string> scalars;
    row_scalars(outer.body, scalars);
    std::string why;
    std::function<void(const Block&)> visit = [&](const Block& b) {
        for (const Stmt& st : b) {
            if (!why.empty()) return;
            if (st.kind == Stmt::Kind::If) {
                visit(st.body);
                visit(st.else_body);
                continue;
            }
            if (st.kind == Stmt::Kind::Opaque) {
                for (const auto& n : st.names)
                    if (cx.outputs.count(n)) why = "it keeps " + opaque_what(st) + " as written at the row's level";
                if (why.empty() && !st.declared.empty())
                    why = "it keeps " + opaque_what(st) + " as written at the row's level, and that declares " +
                          st.declared.front() + ", of which each thread of the group would hold its own copy";
                continue;
            }
            if (st.kind == Stmt::Kind::Decl && st.type == Stmt::Type::Array) {
                why = "it declares the local array " + st.var + " at the row's level, of which each thread of the group would hold its own copy (line " +
                      std::to_string(st.line) + ")";
                return;
            }
            if (st.kind != Stmt::Kind::For) continue;
            Facts f = gather(st.body, cx.tensors, around_in(top_around(cx, outer), outer.body, &st));
            f.loops[st.var] = {&st, 0};
            for (auto& a : f.accesses) a.loops.insert(a.loops.begin(), st.var);
            SpreadLoop spread;
            spread.loop = &st;
            // Reductions: the row's scalars this loop assigns.
            std::set<std::string> reduced;
            for (const Stmt* w : f.scalar_writes)
                if (!f.declared.count(w->target->text)) reduced.insert(w->target->text);
            for (const auto& s : reduced) {
                if (!scalars.count(s)) {
                    why = "the loop over " + st.var + " assigns " + s + ", which is not a scalar of the row (line " +
                          std::to_string(st.line) + ")";
                    return;
                }
                std::vector<const Stmt*> ups;
                bool read = false;
                updates_of(st.body, s, ups, read);
                std::string combine;
                for (const Stmt* u : ups) {
                    std::string c = reduction_combine(*u, s);
                    if (c.empty() || (!combine.empty() && c != combine)) {
                        why = "the loop over " + st.var + " updates " + s + " other than by one sum, product, max or min (line " +
                              std::to_string(u->line) + ")";
                        return;
                    }
                    combine = c;
                }
                if (read) {
                    why = "the loop over " + st.var + " reads " + s + " besides reducing into it";
                    return;
                }
                spread.reductions.push_back({s, combine, scalars.at(s)});
            }
            // What is left must be parallel along the row: the reductions' updates set aside.
            Facts rest = f;
            rest.scalar_writes.clear();
            for (const Stmt* w : f.scalar_writes)
                if (f.declared.count(w->target->text) || !reduced.count(w->target->text)) rest.scalar_writes.push_back(w);
            std::string p = parallel_why(cx, st, rest, {&outer}, plan.row_atomics);
            if (!p.empty()) {
                why = p;
                return;
            }
            plan.spread[&st] = spread;
        }
    };
    visit(outer.body);
    if (why.empty() && plan.spread.empty()) why = "the loop over " + outer.var + " has no loop inside to spread over a group";
    return why;
}

/** The loops collapsed with `outer`: each level's body declarations and the next loop, rectangular. */
void extend_chain(const Context& cx, NestPlan& plan, std::set<std::string>& atomics) {
    while (plan.chain.size() < 3) {
        const Stmt& last = *plan.chain.back();
        if (last.body.empty() || last.body.back().kind != Stmt::Kind::For) return;
        for (std::size_t i = 0; i + 1 < last.body.size(); ++i)
            if (last.body[i].kind != Stmt::Kind::Decl) return;
        const Stmt& next = last.body.back();
        for (const Stmt* s : plan.chain)
            if (mentions(next.start, s->var) || mentions(next.bound, s->var)) return;
        for (std::size_t i = 0; i + 1 < last.body.size(); ++i)
            if (mentions(next.start, last.body[i].var) || mentions(next.bound, last.body[i].var)) return;
        if (reads_array(next.start) || reads_array(next.bound)) return;
        // The whole outer body's facts, checked along the next loop with the outer ones held.
        const Around top = top_around(cx, *plan.chain.front());
        Facts f = gather(plan.chain.front()->body, cx.tensors, top);
        f.loops[plan.chain.front()->var] = {plan.chain.front(), 0};
        Facts inner = gather(next.body, cx.tensors, top);
        // Accesses inside `next` with their loops below it.
        Facts along = f;
        along.accesses.clear();
        for (const auto& a : f.accesses)
            if (std::count(a.loops.begin(), a.loops.end(), next.var)) {
                Access b = a;
                b.loops.erase(b.loops.begin(), std::find(b.loops.begin(), b.loops.end(), next.var) + 1);
                along.accesses.push_back(b);
            }
        along.declared = inner.declared;
        along.scalar_writes = inner.scalar_writes;
        along.opaque = inner.opaque;
        along.exits = inner.exits;
        std::set<std::string> level_atomics;
        if (!parallel_why(cx, next, along, plan.chain, level_atomics).empty()) return;
        atomics.insert(level_atomics.begin(), level_atomics.end());
        plan.chain.push_back(&next);
    }
}

NestPlan plan_nest(const Context& cx, const Stmt& loop, std::set<std::string>& atomics) {
    NestPlan plan;
    plan.loop = &loop;
    if (reads_array(loop.start) || reads_array(loop.bound)) {
        plan.serial_why = "the loop over " + loop.var + " has bounds read from a tensor";
        return plan;
    }
    Facts f = gather(loop.body, cx.tensors, top_around(cx, loop));
    plan.serial_why = parallel_why(cx, loop, f, {}, atomics);
    if (!plan.serial_why.empty()) return plan;
    plan.chain = {&loop};
    extend_chain(cx, plan, atomics);
    plan.atomics = atomics;
    plan.row_atomics = atomics;
    plan.rows_why = plan_rows(cx, loop, plan);
    plan.rows = plan.rows_why.empty();
    if (!plan.rows) {
        plan.spread.clear();
        plan.row_atomics = plan.atomics;
    }
    return plan;
}

}  // namespace

std::set<std::string> output_names(const Task& task) {
    std::set<std::string> out;
    for (const auto& t : task.tensors)
        if (t.role == TensorRole::Output) out.insert(t.name);
    return out;
}

/** The reference's functions that the statements kept as written call, each once, in the file's order. */
void called_functions(const Block& b, std::vector<nest::Helper>& out) {
    for (const Stmt& st : b) {
        for (const auto& h : st.helpers)
            if (std::none_of(out.begin(), out.end(), [&](const nest::Helper& o) { return o.name == h.name; }))
                out.push_back(h);
        called_functions(st.body, out);
        called_functions(st.else_body, out);
    }
}

/** True when e names `n`, as a value or as the array it reads. */
bool uses(const ExprPtr& e, const std::string& n) {
    if (!e) return false;
    if ((e->kind == Expr::Kind::Name || e->kind == Expr::Kind::Index) && e->text == n) return true;
    return std::any_of(e->args.begin(), e->args.end(), [&](const ExprPtr& a) { return uses(a, n); });
}

/** Whether pred holds for one of the statement's own expressions (not those of its body). */
template <class Pred> bool any_expression(const Stmt& st, Pred pred) {
    for (const ExprPtr& e : {st.start, st.bound, st.init, st.value, st.cond, st.target})
        if (e && pred(e)) return true;
    return std::any_of(st.elements.begin(), st.elements.end(), pred);
}

/** Whether the statement (its body included) names `n`; `written` too where it may change its
 *  elements (an assignment to it, a pointer made from it, a statement kept as written that names it). */
bool names_in(const Stmt& st, const std::string& n, bool& written) {
    const bool opaque = st.kind == Stmt::Kind::Opaque && std::count(st.names.begin(), st.names.end(), n) > 0;
    if (opaque || (st.kind == Stmt::Kind::Assign && uses(st.target, n)) ||
        (st.kind == Stmt::Kind::Decl && st.type == Stmt::Type::Pointer && uses(st.init, n)))
        written = true;
    bool any = opaque || any_expression(st, [&](const ExprPtr& e) { return uses(e, n); });
    for (const Block* b : {&st.body, &st.else_body})
        for (const Stmt& inner : *b) any = names_in(inner, n, written) || any;
    return any;
}

/** Whether every mention of the array `a` in e is the element a[v]. */
bool only_at(const ExprPtr& e, const std::string& a, const std::string& v) {
    if (!e) return true;
    if (e->kind == Expr::Kind::Name && e->text == a) return false;
    if (e->kind == Expr::Kind::Index && e->text == a) return is_name(e->args[0], v);
    return std::all_of(e->args.begin(), e->args.end(), [&](const ExprPtr& x) { return only_at(x, a, v); });
}

/** Whether every mention of the array `a` in b is the element a[v], and b neither breaks nor
 *  returns (which would leave the elements after v unwritten). */
bool only_at(const Block& b, const std::string& a, const std::string& v) {
    for (const Stmt& st : b) {
        if (st.kind == Stmt::Kind::Break || st.kind == Stmt::Kind::Return) return false;
        if (st.kind == Stmt::Kind::Opaque && std::count(st.names.begin(), st.names.end(), a) > 0) return false;
        if (st.kind == Stmt::Kind::Decl && st.type == Stmt::Type::Pointer && uses(st.init, a)) return false;
        if (any_expression(st, [&](const ExprPtr& e) { return !only_at(e, a, v); })) return false;
        if (!only_at(st.body, a, v) || !only_at(st.else_body, a, v)) return false;
    }
    return true;
}

/**
 * Whether each iteration of `loop` writes every element of the array `decl` before it reads
 * any: the first statement of its body naming the array is a loop over [0, its length) whose
 * body assigns `a[v] = e` (e not reading a) after declarations and assignments only, and
 * names a afterwards only at a[v]. What an iteration reads of it is then its own.
 */
bool overwritten_first(const Stmt& loop, const Stmt& decl) {
    const std::string& a = decl.var;
    for (const Stmt& st : loop.body) {
        bool ignored = false;
        if (!names_in(st, a, ignored)) continue;
        if (st.kind != Stmt::Kind::For || st.step != 1 || !st.start || st.start->kind != Expr::Kind::Number ||
            st.start->value != 0 || !st.bound || !decl.init || nest::to_text(st.bound) != nest::to_text(decl.init))
            return false;
        for (auto s = st.body.begin(); s != st.body.end(); ++s) {
            if (s->kind == Stmt::Kind::Assign && s->op == "=" && s->target->kind == Expr::Kind::Index && s->target->text == a &&
                is_name(s->target->args[0], st.var) && !uses(s->value, a))
                return only_at(Block(s + 1, st.body.end()), a, st.var);
            if ((s->kind != Stmt::Kind::Decl && s->kind != Stmt::Kind::Assign) || names_in(*s, a, ignored)) return false;
        }
        return false;
    }
    return false;
}

/**
 * Arrays declared at kf_solve's top whose declaration can move into the loops that use them,
 * where every iteration (thread, kernel) has its own copy: one that nothing changes (a
 * filter's taps, `const float w[3] = {0.25f, 0.5f, 0.25f};`), copied into each loop that reads
 * it; and scratch one loop fills anew in each iteration before reading it (a row's
 * exponentials, `std::vector<float> tmp(cols);` declared once for all rows), moved into that
 * loop. Any other array at the top stays there, and is refused there.
 */
void sink_arrays(Block& body) {
    for (auto it = body.begin(); it != body.end();) {
        if (it->kind != Stmt::Kind::Decl || it->type != Stmt::Type::Array) {
            ++it;
            continue;
        }
        bool written = false, outside = false;
        std::vector<Stmt*> loops;
        for (Stmt& st : body) {
            if (&st == &*it) continue;
            const bool named = names_in(st, it->var, written);
            const bool header = uses(st.start, it->var) || uses(st.bound, it->var);  // seen before the body
            if (named && (st.kind != Stmt::Kind::For || header)) outside = true;
            else if (named) loops.push_back(&st);
        }
        if (outside || (written && (loops.size() != 1 || !overwritten_first(*loops[0], *it)))) {
            ++it;
            continue;
        }
        for (Stmt* loop : loops) loop->body.insert(loop->body.begin(), *it);
        it = body.erase(it);
    }
}

Program plan_program(const Task& task, Block body, const std::string& opaque) {
    Program prog;
    sink_arrays(body);
    prog.body = std::move(body);
    prog.opaque = opaque;
    called_functions(prog.body, prog.helpers);
    std::sort(prog.helpers.begin(), prog.helpers.end(),
              [](const nest::Helper& a, const nest::Helper& b) { return a.offset < b.offset; });
    Context cx{task, {}, output_names(task), case_envs(task, prog.body), {}, &prog.body};
    for (const auto& t : task.tensors) cx.tensors.insert(t.name);
    for (const auto& s : task.size_names) cx.top.insert(s);
    for (const auto& p : task.params) cx.top.insert(p.name);
    for (const Stmt& st : prog.body) {
        switch (st.kind) {
            case Stmt::Kind::Decl:
                if (st.type == Stmt::Type::Array)
                    unsupported("kf_solve declares the local array " + st.var + " outside its loops", st.line);
                if (st.init && reads_array(st.init))
                    unsupported("kf_solve reads a tensor outside its loops, in the declaration of " + st.var, st.line);
                cx.top.insert(st.var);
                break;
            case Stmt::Kind::Assign:
                if (st.target->kind != Expr::Kind::Name || reads_array(st.value))
                    unsupported("kf_solve writes or reads a tensor outside its loops", st.line);
                break;
            case Stmt::Kind::If:
                if (reads_array(st.cond) || st.body.size() != 1 || st.body[0].kind != Stmt::Kind::Return ||
                    !st.else_body.empty())
                    unsupported("kf_solve has an if outside its loops other than an early return", st.line);
                break;
            case Stmt::Kind::Return:
                break;
            case Stmt::Kind::For: {
                std::set<std::string> atomics;
                prog.nests.push_back(plan_nest(cx, st, atomics));
                break;
            }
            default:
                unsupported("kf_solve has a statement outside its loops that the generic expert does not write", st.line);
        }
    }
    if (prog.nests.empty()) unsupported("kf_solve has no loop", 0);
    bool any = std::any_of(prog.nests.begin(), prog.nests.end(), [](const NestPlan& p) { return !p.chain.empty(); });
    if (!any) throw Unsupported("no loop of kf_solve may run in parallel: " + prog.nests.front().serial_why);
    return prog;
}

}  // namespace kf::generic
