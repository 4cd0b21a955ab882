// Expert-parallel token exchange sizes of an MoE layer (docs/moe.md, builder.hpp): how many copies of each routed
// token an all-to-all carries under each dispatcher.
//
// alltoall (Megatron's MoEAlltoAllTokenDispatcher): the tokens are permuted per expert, so a token goes to the EP
// rank of each of its top_k experts, k copies (two experts on one rank: two copies).
// flex (DeepEP / HybridEP): a token crosses the network once per destination node and is forwarded inside the
// node over NVLink (once per destination rank). With the EP group spread over N nodes (g of its n ranks per node)
// and group-limited routing confining a token to a of the N nodes (a = N x router_group_topk / router_groups
// when the groups map onto the nodes; else N), the expected number of distinct destination nodes of k experts
// drawn evenly over a nodes is D = a (1 - (1 - 1/a)^k), D (N - 1)/N of them remote. The exchange is priced as an
// all-to-all whose inter-node share (n - g)/n carries those copies: c = D (N - 1)/N x n / (n - g) = D. Inside one
// node (N = 1) the copies are the distinct destination ranks, n (1 - (1 - 1/n)^k). Never more than k.
// allgather: every rank gathers the EP group's tokens (ep x Tr tokens, one copy each).
#pragma once

#include "scalescope/models/model_spec.hpp"
#include "scalescope/models/plan.hpp"

namespace scalescope::models {

/// Copies of each of the rank's routed tokens that one dispatch (or combine) all-to-all carries, for the
/// alltoall and flex dispatchers (header comment); `gpus_per_node` of the cluster. 0 for dense models.
double moe_dispatch_copies(const ModelSpec& spec, const Plan& plan, int gpus_per_node);

}  // namespace scalescope::models
