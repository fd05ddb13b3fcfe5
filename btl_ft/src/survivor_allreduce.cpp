// The survivor allreduce's state machine (survivor_allreduce.hpp). Every
// input (a message, a failure) ends in progress(), which re-derives what to
// send from the state and the failed set: the tree is never stored, only
// recomputed around the failed ranks, so a late failure needs no repair
// step of its own.
#include "btl_ft/survivor_allreduce.hpp"

#include <algorithm>
#include <optional>
#include <span>
#include <string>

#include "btl_ft/assert.hpp"
#include "survivor_allreduce_call.hpp"

namespace btl_ft {

survivor_allreduce::survivor_allreduce(const allreduce_config& config, collective_transport& transport,
                                       const reduce_operation& operation)
    : config_(config),
      transport_(transport),
      operation_(operation),
      tree_(config.size, config.radix),
      everyone_({{0, config.size}}) {
    BTL_FT_ASSERT(config.self < config.size, "allreduce self out of range");
}

survivor_allreduce::~survivor_allreduce() = default;

void survivor_allreduce::on_failed(std::span<const rank_t> ranks) {
    bool changed = false;
    for (const rank_t rank : ranks) {
        BTL_FT_ASSERT(rank < config_.size, "failed rank out of range");
        if (rank == config_.self) {
            self_failed_ = true;
        } else {
            changed = failed_.insert(rank) || changed;
        }
    }
    if (!changed) return;
    for (call* op : {previous_.get(), current_.get()}) {
        if (op) op->disturbed = true;
    }
    if (previous_) progress(*previous_);
    if (current_) progress(*current_);
}

void survivor_allreduce::greet() {
    constexpr rank_t root = 0, successor = 1;  // while nothing has failed; the successor is a leaf
    const rank_t parent = tree_.parent(config_.self);
    const rank_t grandparent = parent == no_rank ? no_rank : tree_.parent(parent);
    const rank_t near_root = parent == root || grandparent == root ? successor : no_rank;
    for (const rank_t peer : {parent, grandparent, near_root}) {
        if (peer == no_rank || peer == config_.self || failed_.contains(peer)) continue;
        transport_.send(peer, allreduce_wire::encode_greeting(scratch_));
        ++stats_.greetings_sent;
    }
}

void survivor_allreduce::begin(std::span<const std::byte> value) {
    BTL_FT_ASSERT(value.size() <= config_.max_value_bytes, "allreduce value longer than the configured maximum");
    BTL_FT_ASSERT(status() != allreduce_status::running, "allreduce begun before the previous call ended");
    const std::uint32_t sequence = current_ ? current_->sequence + 1 : 1;
    std::unique_ptr<call> next = std::move(previous_);  // the call before the last, renewed
    previous_ = std::move(current_);
    if (!next) next = std::make_unique<call>();
    next->renew(sequence);
    current_ = std::move(next);
    current_->value.assign(value.begin(), value.end());
    current_->combined.assign_one(config_.self);
    if (fast_eligible(value.size())) start_fast(*current_);
    deliver_early();
    progress(*current_);
}

// The messages that came for this call before it began, in their order.
// None can join them meanwhile (they would be for the call after this one).
void survivor_allreduce::deliver_early() {
    const std::size_t count = early_count_;
    for (std::size_t i = 0; i < count; ++i) deliver(early_[i].from, early_[i].bytes);
    std::rotate(early_.begin(), early_.begin() + static_cast<std::ptrdiff_t>(count),
                early_.begin() + static_cast<std::ptrdiff_t>(early_count_));
    early_count_ -= count;
}

void survivor_allreduce::on_message(rank_t from, std::span<const std::byte> bytes) {
    ++stats_.received;
    deliver(from, bytes);
}

void survivor_allreduce::deliver(rank_t from, std::span<const std::byte> bytes) {
    allreduce_wire::message& message = incoming_;
    if (from >= config_.size ||
        allreduce_wire::decode(bytes, {config_.size, config_.max_value_bytes}, message) != wire::status::ok) {
        ++stats_.malformed;
        return;
    }
    if (message.type == allreduce_wire::msg_type::greeting) {
        ++stats_.greetings;  // its work was done by the transport
        return;
    }
    if (failed_.contains(from)) {
        ++stats_.from_failed;
        return;
    }
    if (self_failed_) return;
    const std::uint32_t current = current_ ? current_->sequence : 0;
    call* op = nullptr;
    if (current_ && message.sequence == current) op = current_.get();
    if (previous_ && message.sequence == previous_->sequence) op = previous_.get();
    if (op && message.value.size() != op->value.size()) {
        ++stats_.malformed;  // a value of another length than this call's
    } else if (op) {
        if (message.type != allreduce_wire::msg_type::exchange) {
            op->disturbed = true;
            if (op->fast) fall_back(*op);  // before the tree's message meets the exchanges' sums
        }
        handle(*op, from, message);
        progress(*op);
    } else if (message.sequence == current + 1 && early_count_ < 4 * std::size_t{config_.size}) {
        if (early_count_ == early_.size()) early_.emplace_back();
        early_[early_count_].from = from;
        early_[early_count_].bytes.assign(bytes.begin(), bytes.end());
        ++early_count_;
    } else {
        ++stats_.out_of_sequence;
    }
}

void survivor_allreduce::handle(call& op, rank_t from, const allreduce_wire::message& message) {
    using allreduce_wire::msg_type;
    if (message.type == msg_type::exchange) {
        take_exchange(op, from, message);
        return;
    }
    const bool from_its_root = message.type == msg_type::prepare && message.root == from;
    if (op.decided) {
        const bool same = message.type == msg_type::partial ||
                          (message.contributors == op.result_set && message.decided_by == op.decided_by);
        if (same && message.type != msg_type::partial && message.type != msg_type::hold) {
            op.fast_result = false;  // the root's chain holds it too: pass it on like any decision
        }
        if (!same) {
            ++stats_.conflicts;
        } else if (message.type == msg_type::partial && op.fast_result) {
            // a result of the fast path goes to the root alone (survivor_allreduce_fast.cpp)
        } else if (message.type == msg_type::partial) {
            // The sender is still waiting: answer it directly (a root leaves
            // that to its successor while it has one).
            const bool root_with_successor = op.result_root == config_.self && successor() != no_rank;
            if (!root_with_successor &&
                !std::binary_search(op.result_sent_to.begin(), op.result_sent_to.end(), from)) {
                send_result(op, from, allreduce_wire::msg_type::result);
            }
        } else if (message.type != msg_type::hold && message.root > op.result_root) {
            // A later root adopted this decision: pass it on under that root,
            // so that processes that refused the earlier one accept it.
            op.result_root = message.root;
            op.result_sent_to.clear();
            op.hold_sent_to = no_rank;
        }
        if (same && from_its_root && message.root == op.result_root) op.delegated_by = from;
        return;
    }
    switch (message.type) {
    case msg_type::partial: combine(op, message.contributors, message.value); break;
    case msg_type::hold: op.pending_hold = message; break;
    case msg_type::result:
    case msg_type::prepare:
        adopt(op, message.value, message.contributors, message.decided_by, message.root);
        if (from_its_root) op.delegated_by = from;
        break;
    case msg_type::exchange:  // taken above
    case msg_type::greeting:  // dropped in deliver
        break;
    }
}

void survivor_allreduce::combine(call& op, const rank_ranges& set, std::span<const std::byte> value) {
    if (op.combined.includes(set)) return;  // already in, through a process above the sender
    if (op.combined.intersects(set)) {
        ++stats_.overlapping;
        return;
    }
    operation_.combine(op.value, value);
    op.combined.unite(set);
}

void survivor_allreduce::progress(call& op) {
    if (self_failed_) return;
    if (op.fast && op.disturbed) fall_back(op);
    if (op.fast) progress_fast(op);
    if (!op.fast && !op.decided) progress_up(op);
    if (op.decided) progress_down(op);
}

void survivor_allreduce::progress_up(call& op) {
    const rank_t current_root = root();
    if (current_root == config_.self) {
        if (op.pending_hold) {
            const allreduce_wire::message hold = std::move(*op.pending_hold);
            op.pending_hold.reset();
            adopt(op, hold.value, hold.contributors, hold.decided_by, config_.self);
        } else if (covered(op)) {
            decide(op);
        }
        return;
    }
    if (!op.frozen && covered(op)) {
        op.frozen = true;
        op.partial_value = op.value;
        op.partial_set = op.combined;
    }
    if (!op.frozen) return;
    const rank_t up = nearest_live_parent(config_.self);
    if (up == op.partial_sent_to) return;
    transport_.send(up, allreduce_wire::encode(allreduce_wire::msg_type::partial, op.sequence, 0, 0, op.partial_set,
                                               op.partial_value, scratch_));
    ++stats_.partials_sent;
    op.partial_sent_to = up;
}

void survivor_allreduce::decide(call& op) {
    BTL_FT_ASSERT(op.combined.contains(config_.self), "a root deciding without its own value");
    if (config_.self != 0) ++stats_.root_takeovers;
    adopt(op, op.value, op.combined, config_.self, config_.self);
}

void survivor_allreduce::adopt(call& op, std::span<const std::byte> value, const rank_ranges& set, rank_t decided_by,
                               rank_t under_root) {
    BTL_FT_ASSERT(!op.decided, "a call decided twice");
    BTL_FT_ASSERT(!set.empty() && value.size() == op.value.size(), "adopting an empty or misshapen result");
    op.decided = true;
    op.result_value.assign(value.begin(), value.end());
    op.result_set = set;
    op.self_in_result = set.contains(config_.self);
    op.decided_by = decided_by;
    op.result_root = under_root;
    op.pending_hold.reset();
}

void survivor_allreduce::progress_down(call& op) {
    if (report_fast_result(op)) return;
    const rank_t current_root = root();
    if (current_root == config_.self && op.result_root != config_.self) {
        // The root this result came under failed and this process is the
        // next: the result is final, it only needs to reach everyone again.
        if (op.decided_by != config_.self) ++stats_.root_takeovers;
        op.result_root = config_.self;
        op.result_sent_to.clear();
        op.prepared = no_rank;
    } else if (current_root != config_.self && failed_.contains(op.result_root) &&
               nearest_live_parent(config_.self) == current_root && op.hold_sent_to != current_root) {
        transport_.send(current_root, allreduce_wire::encode(allreduce_wire::msg_type::hold, op.sequence, 0,
                                                             op.decided_by, op.result_set, op.result_value, scratch_));
        ++stats_.holds_sent;
        op.hold_sent_to = current_root;
    }
    if (op.result_root == config_.self && prepare(op)) return;
    std::vector<rank_t>& children = walk_.down;
    live_children(config_.self, children);
    if (op.delegated_by != no_rank && op.delegated_by == op.result_root && !failed_.contains(op.delegated_by)) {
        std::vector<rank_t>& its_children = walk_.delegated;
        its_children.clear();
        expand(0, its_children, op.delegated_by);
        for (const rank_t child : its_children) {
            if (child != config_.self) children.push_back(child);
        }
    }
    for (const rank_t child : children) {
        if (!std::binary_search(op.result_sent_to.begin(), op.result_sent_to.end(), child)) {
            send_result(op, child, allreduce_wire::msg_type::result);
        }
    }
}

// A root sends its decision to its successor alone, which sends it down
// on the root's behalf: so whoever takes over from a root that others
// already consider failed (a false suspicion not yet enforced) either
// holds its decision or has refused it (messages from a process known
// failed are dropped), and nobody else can hold it first. True while the
// root has a successor (it then sends nothing else).
bool survivor_allreduce::prepare(call& op) {
    const rank_t next = successor();
    if (next == no_rank) return false;
    if (op.prepared != next) {
        send_result(op, next, allreduce_wire::msg_type::prepare);
        op.prepared = next;
    }
    return true;
}

void survivor_allreduce::send_result(call& op, rank_t to, allreduce_wire::msg_type type) {
    transport_.send(to, allreduce_wire::encode(type, op.sequence, op.result_root, op.decided_by, op.result_set,
                                               op.result_value, scratch_));
    ++stats_.results_sent;
    op.result_sent_to.insert(std::lower_bound(op.result_sent_to.begin(), op.result_sent_to.end(), to), to);
}

bool survivor_allreduce::covered(const call& op) const {
    if (root() == config_.self) return op.combined.covers(0, config_.size, failed_);
    return op.combined.covers(config_.self, tree_.subtree_end(config_.self), failed_);
}

// The failed set never holds this process (self_failed_ does), so this
// one always has an index among the live ranks.
rank_t survivor_allreduce::root() const { return failed_.alive_at(0); }

rank_t survivor_allreduce::successor() const {
    const rank_t next = failed_.alive_at(failed_.alive_index(config_.self) + 1);
    return next < config_.size ? next : no_rank;
}

rank_t survivor_allreduce::nearest_live_parent(rank_t rank) const {
    rank_t parent = tree_.parent(rank);
    while (parent != no_rank && failed_.contains(parent)) parent = tree_.parent(parent);
    return parent == no_rank ? root() : parent;
}

void survivor_allreduce::live_children(rank_t rank, std::vector<rank_t>& out) const {
    out.clear();
    if (rank == root()) {
        expand(0, out, rank);  // everyone below the failed ranks under 0, and this one's own subtree
        return;
    }
    std::vector<rank_t>& children = walk_.tree_children;
    tree_.children(rank, children);
    for (const rank_t child : children) expand(child, out, no_rank);
}

// A live rank stands for itself; a failed one (or `root`, standing in for
// rank 0) for the live ranks below it.
void survivor_allreduce::expand(rank_t rank, std::vector<rank_t>& out, rank_t root) const {
    std::vector<rank_t>& pending = walk_.pending;
    std::vector<rank_t>& children = walk_.children;
    pending.assign(1, rank);
    while (!pending.empty()) {
        const rank_t next = pending.back();
        pending.pop_back();
        if (next != root && !failed_.contains(next)) {
            out.push_back(next);
            continue;
        }
        tree_.children(next, children);
        pending.insert(pending.end(), children.rbegin(), children.rend());
    }
}

allreduce_status survivor_allreduce::status() const {
    if (self_failed_) return allreduce_status::excluded;
    if (!current_) return allreduce_status::idle;
    const call& op = *current_;
    if (!op.decided) return allreduce_status::running;
    return op.self_in_result ? allreduce_status::done : allreduce_status::excluded;
}

// While nothing is known failed, a process waits for one peer at a time,
// but while it combines its subtree's partials (the root, an inner node):
// on the fast path, the step's partner; on the tree, the sender of its
// result: the root for its successor (PREPARE), the successor for the
// root's other children (it sends down on the root's behalf), the parent
// for the others. Repairs bring messages from anyone, and so may a call
// that left the fast path for a message of the tree, sent by a process
// that knows a failure this one does not yet.
survivor_allreduce::awaited_message survivor_allreduce::awaited() const {
    if (status() != allreduce_status::running || !failed_.empty() || current_->fell_back) return {};
    const call& op = *current_;
    rank_t from = no_rank;
    if (op.fast) {
        from = fast_partner(op);
    } else if (op.frozen) {  // root 0, its successor 1
        const rank_t parent = tree_.parent(config_.self);
        from = config_.self == 1 ? 0 : parent == 0 ? 1 : parent;
    }
    if (from == no_rank) return {};
    const std::size_t previous_bytes = previous_ ? previous_->value.size() : 0;
    return {from, allreduce_wire::max_message_bytes(config_.size, std::max(op.value.size(), previous_bytes))};
}

std::span<const std::byte> survivor_allreduce::result() const {
    BTL_FT_ASSERT(current_ && current_->decided, "allreduce result asked before the call decided");
    return current_->result_value;
}

const rank_ranges& survivor_allreduce::contributors() const {
    BTL_FT_ASSERT(current_ && current_->decided, "allreduce contributors asked before the call decided");
    return current_->result_set;
}

rank_t survivor_allreduce::decided_by() const {
    BTL_FT_ASSERT(current_ && current_->decided, "allreduce root asked before the call decided");
    return current_->decided_by;
}

namespace {

// Appends piece by piece: GCC 12 warns falsely (-Wrestrict) on chains of
// string operator+.
void append_set(std::string& out, const rank_ranges& set) {
    out += '{';
    bool first = true;
    for (const rank_range& range : set.ranges()) {
        if (!first) out += ',';
        first = false;
        out += std::to_string(range.begin);
        if (range.end > range.begin + 1) {
            out += '-';
            out += std::to_string(range.end - 1);
        }
    }
    out += '}';
}

void append_ranks(std::string& out, std::span<const rank_t> ranks) {
    out += '{';
    for (const rank_t rank : ranks) {
        if (out.back() != '{') out += ',';
        out += std::to_string(rank);
    }
    out += '}';
}

void append_rank(std::string& out, rank_t rank) { out += rank == no_rank ? "none" : std::to_string(rank); }

}  // namespace

std::string survivor_allreduce::describe(const call& op) const {
    std::string out = "call ";
    out += std::to_string(op.sequence);
    if (op.fast) {  // what it combined follows from the step
        out += ": fast path at step ";
        out += std::to_string(op.step);
    } else {
        out += ": combined ";
        append_set(out, op.combined);
    }
    if (op.frozen) {
        out += ", partial ";
        append_set(out, op.partial_set);
        out += " to ";
        append_rank(out, op.partial_sent_to);
    }
    if (op.pending_hold) out += ", a hold pending";
    if (op.decided) {
        out += ", decided by ";
        if (op.decided_by == allreduce_wire::fast_path_decider(config_.size)) {
            out += "the fast path";
        } else {
            append_rank(out, op.decided_by);
        }
        out += " under root ";
        append_rank(out, op.result_root);
        out += " over ";
        append_set(out, op.result_set);
        out += ", sent to ";
        out += std::to_string(op.result_sent_to.size());
        if (op.fast_result) out += op.disturbed ? ", by the fast path, reported to the root" : ", by the fast path";
        if (op.delegated_by != no_rank) {
            out += ", for root ";
            append_rank(out, op.delegated_by);
        }
    }
    return out;
}

std::string survivor_allreduce::describe() const {
    std::string out = "root ";
    append_rank(out, root());
    out += ", successor ";
    append_rank(out, successor());
    out += ", failed ";
    append_ranks(out, failed_.ranks());
    out += ", ";
    out += std::to_string(early_count_);
    out += " early";
    if (current_) {
        out += "; ";
        out += describe(*current_);
    }
    if (previous_) {
        out += "; previous ";
        out += describe(*previous_);
    }
    return out;
}

}  // namespace btl_ft
