// Datasheet defaults of the collective model (with their sources) and their JSON (de)serialisation.
#include "scalescope/sim/collective_params.hpp"

#include <functional>

#include "collective_params_size.hpp"

namespace scalescope {

namespace {

constexpr const char* kSchema = "scalescope.collective_params/1";

}  // namespace

CollectiveParams datasheet_collective_params() {
  CollectiveParams p;
  const int R = idx(Algorithm::ring), T = idx(Algorithm::tree), W = idx(Algorithm::pairwise), P = idx(Algorithm::p2p);
  const int nvl = idx(LinkClass::nvlink), pci = idx(LinkClass::pcie), net = idx(LinkClass::net);

  // NCCL 2.19 src/graph/tuning.cc baseLat (us), order {LL, LL128, Simple}. Tree/Simple is 0 there:
  // its 28 us per-hop cost carries the launch cost.
  p.base_latency_us[R] = {6.6, 14.0, 8.4};
  p.base_latency_us[T] = {6.8, 14.0, 0.0};
  p.base_latency_us[W] = {0.0, 0.0, 8.4};
  p.base_latency_us[P] = {0.0, 0.0, 8.4};
  p.base_latency_source =
      "datasheet: NCCL 2.19 src/graph/tuning.cc baseLat (ring, tree); "
      "assumed: pairwise and p2p use ring/Simple's 8.4 us (NCCL's tuning table has no p2p entry)";

  // NCCL 2.19 hwLat[NVLINK|PCI|NET][algorithm][protocol] (us).
  p.hop_latency_us[nvl][R] = {0.6, 1.9, 3.4};
  p.hop_latency_us[nvl][T] = {0.6, 1.25, 28.0};
  p.hop_latency_us[pci][R] = {1.0, 2.5, 5.7};
  p.hop_latency_us[pci][T] = {1.0, 1.9, 28.0};
  p.hop_latency_us[net][R] = {2.7, 4.0, 14.0};
  p.hop_latency_us[net][T] = {5.0, 8.5, 28.0};
  for (int c : {nvl, pci, net}) {
    p.hop_latency_us[c][W] = {0.0, 0.0, p.hop_latency_us[c][R][2]};
    p.hop_latency_us[c][P] = {0.0, 0.0, p.hop_latency_us[c][R][2]};
  }
  p.hop_latency_source =
      "datasheet: NCCL 2.19 src/graph/tuning.cc hwLat (NVLink, PCI, NET rows for ring and tree); "
      "assumed: pairwise (per peer) and p2p (per send) hops cost ring/Simple's per-hop latency";

  // NCCL tuning.cc model refinements: ring LL busBw * 1/4 (8 data bytes per 16 on the wire, and
  // flag polling), ring LL128 * 0.92 (120 of 128 bytes), tree LL * 1/3.8, tree LL128 * 120/128
  // (multi-node value; NCCL uses 7/9 on one node). Alltoall and sendrecv run Simple only.
  p.protocol_efficiency[R] = {0.25, 0.92, 1.0};
  p.protocol_efficiency[T] = {1.0 / 3.8, 120.0 / 128.0, 1.0};
  p.protocol_efficiency[W] = {0.0, 0.0, 1.0};
  p.protocol_efficiency[P] = {0.0, 0.0, 1.0};
  p.protocol_efficiency_source =
      "datasheet: NCCL 2.19 src/graph/tuning.cc protocol factors (ring LL 1/4, LL128 0.92; tree LL 1/3.8, "
      "LL128 120/128); assumed: p2p and alltoall use Simple only";

  // NVLink: NCCL's topology model credits an NVLink (25 GB/s per direction, NVLink3 and NVLink4
  // datasheets) with SM80_NVLINK_BW = 20.0 GB/s (src/graph/topo.h; 20.0 for SM90 in NCCL 2.18/2.19,
  // 20.6 in later releases): 0.80. PCIe: PCI_BW = 12.0 GB/s for a Gen3 x16 link of 15.75 GB/s
  // raw: 0.76. Network: NCCL models the NIC at port speed; 0.92 is assumed from perftest
  // ib_write_bw reaching ~92-96% of HDR/NDR line rate.
  p.link_efficiency[nvl] = 0.80;
  p.link_efficiency[pci] = 0.76;
  p.link_efficiency[net] = 0.92;
  p.link_efficiency_source =
      "datasheet: NCCL src/graph/topo.h SM80_NVLINK_BW 20.0 / 25 GB/s = 0.80 (public 8x A100 all_reduce "
      "busbw 230-240 GB/s of 300 agrees), PCI_BW 12.0 / 15.75 GB/s = 0.76; assumed: net 0.92 "
      "(ib_write_bw reaches ~92-96% of HDR/NDR line rate)";

  for (auto& per_algo : p.bus_efficiency)
    for (auto& per_class : per_algo) per_class = {1.0, 1.0, 1.0};
  p.bus_efficiency[idx(CollOp::all_reduce)][T] = {0.92, 0.92, 0.92};
  p.bus_efficiency_source =
      "datasheet: NCCL 2.19 src/graph/tuning.cc tree busBw * 0.92; 1.0 elsewhere (not yet fitted to a profile)";

  p.channels = 16;
  p.p2p_channels = 16;
  p.channel_max_GBps = {0.0, 36.7, 38.7};
  p.max_busbw_GBps = {87.7, 0.0, 0.0};
  p.channel_threshold_bytes = {512.0 * 8.0, 640.0 * 8.0, 512.0 * 64.0};
  p.channels_source =
      "assumed: 16 channels (NCCL's usual count on 8-GPU NVSwitch and 8-NIC nodes; varies with topology and "
      "version); datasheet: NCCL 2.19 tuning.cc Hopper caps perChMaxRingLL128Bw 36.7 GB/s, perChMaxTreeBw "
      "38.7 GB/s (used for Simple), llMaxBw 87.7 GB/s (LL total); src/include/comm.h thread thresholds "
      "(LL 8, LL128 8, Simple 64 bytes per thread) times max threads (512, 640, 512)";
  p.size_efficiency_source = "datasheet: no efficiency-by-size curve (1 at every size; only calibration fits one)";
  return p;
}

namespace {

// ---- writing -------------------------------------------------------------------------------

Json per_proto_json(const PerProtocol<double>& v) {
  Json j = Json::object();
  for (Protocol pr : kAllProtocols) j[std::string(to_string(pr))] = v[static_cast<std::size_t>(idx(pr))];
  return j;
}

Json per_algo_proto_json(const PerAlgoProto<double>& v) {
  Json j = Json::object();
  for (Algorithm a : kAllAlgorithms) j[std::string(to_string(a))] = per_proto_json(v[static_cast<std::size_t>(idx(a))]);
  return j;
}

// ---- reading -------------------------------------------------------------------------------

/// Reads an optional group: checks keys, requires "source", and tracks whether every entry was
/// given so that the provenance can say which entries kept their defaults.
struct GroupReader {
  const JsonCursor& group;
  int expected = 0;
  int given = 0;

  std::optional<JsonCursor> entry(const JsonCursor& c, std::string_view key) {
    ++expected;
    auto e = c.find(key);
    if (e) ++given;
    return e;
  }
  std::string provenance(const std::string& default_source) const {
    const std::string src = group.get_string("source");
    if (src.empty()) group.at("source").fail("expected a non-empty string describing where the values come from");
    return given == expected ? src : src + "; other entries: " + default_source;
  }
};

template <class E, std::size_t N>
std::vector<std::string_view> names_of(const std::array<E, N>& all) {
  std::vector<std::string_view> out;
  for (E e : all) out.push_back(to_string(e));
  return out;
}

void expect_keys_dynamic(const JsonCursor& c, const std::vector<std::string_view>& allowed) {
  c.expect_object();
  for (const auto& [key, value] : c.members()) {
    bool ok = false;
    for (auto a : allowed) ok = ok || key == a;
    if (!ok) {
      std::string list;
      for (auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
      value.fail("unknown key '" + key + "' (expected one of: " + list + ")");
    }
  }
}

void read_per_proto(GroupReader& g, const JsonCursor& c, PerProtocol<double>& out,
                    const std::function<double(const JsonCursor&)>& read) {
  std::vector<std::string_view> keys = names_of(kAllProtocols);
  expect_keys_dynamic(c, keys);
  for (Protocol pr : kAllProtocols)
    if (auto e = g.entry(c, to_string(pr))) out[static_cast<std::size_t>(idx(pr))] = read(*e);
}

void read_per_algo_proto(GroupReader& g, const JsonCursor& c, PerAlgoProto<double>& out,
                         const std::function<double(const JsonCursor&)>& read) {
  std::vector<std::string_view> keys = names_of(kAllAlgorithms);
  keys.push_back("source");  // used for whole groups, which carry their provenance
  expect_keys_dynamic(c, keys);
  for (Algorithm a : kAllAlgorithms) {
    if (auto e = c.find(to_string(a))) {
      read_per_proto(g, *e, out[static_cast<std::size_t>(idx(a))], read);
    } else {
      g.expected += kNumProtocols;
    }
  }
}

/// Latencies (us), per-channel bandwidths (GB/s) and thresholds (bytes): non-negative and at most 2^50,
/// the largest of their plausible ranges (docs/plausible-ranges.md); 1e308 is refused, not fitted on.
double read_nonneg(const JsonCursor& c) { return c.as_number_in(0.0, 1125899906842624.0); }
double read_fraction(const JsonCursor& c) {
  const double v = c.as_nonnegative_number();
  if (v > 1.0) c.fail("expected a fraction in [0, 1], " + JsonCursor::describe(c.json()));
  return v;
}
double read_positive_fraction(const JsonCursor& c) {
  const double v = c.as_positive_number();
  if (v > 1.0) c.fail("expected a fraction in (0, 1], " + JsonCursor::describe(c.json()));
  return v;
}

}  // namespace

Json to_json(const CollectiveParams& p) {
  Json j = Json::object();
  j["schema"] = kSchema;

  Json base = per_algo_proto_json(p.base_latency_us);
  base["source"] = p.base_latency_source;
  j["base_latency_us"] = base;

  Json hop = Json::object();
  hop["source"] = p.hop_latency_source;
  for (LinkClass c : kAllLinkClasses)
    hop[std::string(to_string(c))] = per_algo_proto_json(p.hop_latency_us[static_cast<std::size_t>(idx(c))]);
  j["hop_latency_us"] = hop;

  Json pe = per_algo_proto_json(p.protocol_efficiency);
  pe["source"] = p.protocol_efficiency_source;
  j["protocol_efficiency"] = pe;

  Json le = Json::object();
  le["source"] = p.link_efficiency_source;
  for (LinkClass c : kAllLinkClasses) le[std::string(to_string(c))] = p.link_efficiency[static_cast<std::size_t>(idx(c))];
  j["link_efficiency"] = le;

  Json be = Json::object();
  be["source"] = p.bus_efficiency_source;
  for (CollOp op : kAllCollOps) {
    Json per_op = Json::object();
    for (Algorithm a : kAllAlgorithms) {
      if (!algorithm_supports(a, op)) continue;
      Json per_class = Json::object();
      for (LinkClass c : kAllLinkClasses) per_class[std::string(to_string(c))] = p.bus_eff(op, a, c);
      per_op[std::string(to_string(a))] = per_class;
    }
    be[std::string(to_string(op))] = per_op;
  }
  j["bus_efficiency"] = be;

  Json ch = Json::object();
  ch["source"] = p.channels_source;
  ch["count"] = p.channels;
  ch["p2p"] = p.p2p_channels;
  ch["max_GBps"] = per_proto_json(p.channel_max_GBps);
  ch["max_busbw_GBps"] = per_proto_json(p.max_busbw_GBps);
  ch["threshold_bytes"] = per_proto_json(p.channel_threshold_bytes);
  j["channels"] = ch;
  Json se = collparams::size_efficiency_to_json(p);
  if (!se.empty()) j["size_efficiency"] = se;
  return j;
}

Expected<CollectiveParams> collective_params_from_json(const Json& doc, std::string source) {
  return catch_errors([&]() -> CollectiveParams {
    const CollectiveParams dflt = datasheet_collective_params();
    CollectiveParams p = dflt;
    const JsonCursor root(doc, source);
    root.expect_keys({"schema", "base_latency_us", "hop_latency_us", "protocol_efficiency", "link_efficiency",
                      "bus_efficiency", "channels", "size_efficiency"});
    if (auto s = root.find("schema")) {
      if (s->as_string() != kSchema) s->fail(std::string("expected \"") + kSchema + "\", " + JsonCursor::describe(s->json()));
    }

    if (auto g = root.find("base_latency_us")) {
      GroupReader r{*g};
      read_per_algo_proto(r, *g, p.base_latency_us, read_nonneg);
      p.base_latency_source = r.provenance(dflt.base_latency_source);
    }
    if (auto g = root.find("hop_latency_us")) {
      GroupReader r{*g};
      std::vector<std::string_view> keys = names_of(kAllLinkClasses);
      keys.push_back("source");
      expect_keys_dynamic(*g, keys);
      for (LinkClass c : kAllLinkClasses) {
        auto& table = p.hop_latency_us[static_cast<std::size_t>(idx(c))];
        if (auto e = g->find(to_string(c))) {
          std::vector<std::string_view> algos = names_of(kAllAlgorithms);
          expect_keys_dynamic(*e, algos);
          for (Algorithm a : kAllAlgorithms) {
            if (auto ea = e->find(to_string(a)))
              read_per_proto(r, *ea, table[static_cast<std::size_t>(idx(a))], read_nonneg);
            else
              r.expected += kNumProtocols;
          }
        } else {
          r.expected += kNumAlgorithms * kNumProtocols;
        }
      }
      p.hop_latency_source = r.provenance(dflt.hop_latency_source);
    }
    if (auto g = root.find("protocol_efficiency")) {
      GroupReader r{*g};
      read_per_algo_proto(r, *g, p.protocol_efficiency, read_fraction);
      for (Algorithm a : kAllAlgorithms) {
        if (p.proto_eff(a, Protocol::Simple) <= 0.0)
          g->fail("protocol_efficiency of " + std::string(to_string(a)) + "/Simple must stay positive (Simple is always available)");
      }
      p.protocol_efficiency_source = r.provenance(dflt.protocol_efficiency_source);
    }
    if (auto g = root.find("link_efficiency")) {
      GroupReader r{*g};
      std::vector<std::string_view> keys = names_of(kAllLinkClasses);
      keys.push_back("source");
      expect_keys_dynamic(*g, keys);
      for (LinkClass c : kAllLinkClasses)
        if (auto e = r.entry(*g, to_string(c))) p.link_efficiency[static_cast<std::size_t>(idx(c))] = read_positive_fraction(*e);
      p.link_efficiency_source = r.provenance(dflt.link_efficiency_source);
    }
    if (auto g = root.find("bus_efficiency")) {
      GroupReader r{*g};
      std::vector<std::string_view> ops = names_of(kAllCollOps);
      ops.push_back("source");
      expect_keys_dynamic(*g, ops);
      for (CollOp op : kAllCollOps) {
        int valid_algos = 0;
        for (Algorithm a : kAllAlgorithms) valid_algos += algorithm_supports(a, op) ? 1 : 0;
        auto e = g->find(to_string(op));
        if (!e) {
          r.expected += valid_algos * kNumLinkClasses;
          continue;
        }
        std::vector<std::string_view> algos;
        for (Algorithm a : kAllAlgorithms)
          if (algorithm_supports(a, op)) algos.push_back(to_string(a));
        expect_keys_dynamic(*e, algos);
        for (Algorithm a : kAllAlgorithms) {
          if (!algorithm_supports(a, op)) continue;
          auto ea = e->find(to_string(a));
          if (!ea) {
            r.expected += kNumLinkClasses;
            continue;
          }
          expect_keys_dynamic(*ea, names_of(kAllLinkClasses));
          for (LinkClass c : kAllLinkClasses) {
            if (auto ec = r.entry(*ea, to_string(c))) {
              const double v = ec->as_positive_number();
              if (v > 2.0) ec->fail("expected a bus efficiency in (0, 2], " + JsonCursor::describe(ec->json()));
              p.bus_efficiency[static_cast<std::size_t>(idx(op))][static_cast<std::size_t>(idx(a))]
                              [static_cast<std::size_t>(idx(c))] = v;
            }
          }
        }
      }
      p.bus_efficiency_source = r.provenance(dflt.bus_efficiency_source);
    }
    if (auto g = root.find("channels")) {
      GroupReader r{*g};
      g->expect_keys({"source", "count", "p2p", "max_GBps", "max_busbw_GBps", "threshold_bytes"});
      if (auto e = r.entry(*g, "count")) {
        const auto v = e->as_positive_int();
        if (v > 64) e->fail("expected at most 64 channels, " + JsonCursor::describe(e->json()));
        p.channels = static_cast<int>(v);
      }
      if (auto e = r.entry(*g, "p2p")) {
        const auto v = e->as_positive_int();
        if (v > 64) e->fail("expected at most 64 channels, " + JsonCursor::describe(e->json()));
        p.p2p_channels = static_cast<int>(v);
      }
      auto table = [&](std::string_view key, PerProtocol<double>& out) {
        if (auto e = g->find(key)) read_per_proto(r, *e, out, read_nonneg);
        else r.expected += kNumProtocols;
      };
      table("max_GBps", p.channel_max_GBps);
      table("max_busbw_GBps", p.max_busbw_GBps);
      table("threshold_bytes", p.channel_threshold_bytes);
      p.channels_source = r.provenance(dflt.channels_source);
    }
    if (auto g = root.find("size_efficiency")) collparams::read_size_efficiency(*g, p);
    return p;
  });
}

}  // namespace scalescope
