"""The measured sets of validation/REPORT.md, their calibrations and host costs: shared by make_report.py and
harness_stack_report.py."""
HOST_COST = "validation/profiles/h200-torch/host_dispatch.json"  # measured host dispatch (harness/host_dispatch.py)
SETS = [("h200x4", "validation/h200x4/measured", "h200x4"), ("h200x2", "validation/h200x2/measured", "h200x2"),
        ("h200x4-llama7b", "validation/h200x4-llama7b/measured", "h200x4"),
        ("h200x4-interleaved", "validation/h200x4-interleaved/measured", "h200x4"),
        ("h200x4-tp-lease7", "validation/h200x4-tp-lease7/measured", "h200x4"),
        ("h200x4-qwen2", "validation/h200x4-qwen2/measured", "h200x4")]
# Host (CPU dispatch) cost per measured folder: a set re-measured on another lease is predicted with the host cost
# measured on that lease (host speed differs between leases; see "Host speed differs between leases").
HOST_COST_OF = {"validation/h200x4-tp-lease7/measured": "validation/h200x4-tp-lease7/host_dispatch.json"}
