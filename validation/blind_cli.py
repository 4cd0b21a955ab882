"""The command line shared by the sessions' blind-check scripts (validation/session*/predict_*.py): predict with
BIN into -o before a device call, or report the measured folder against the committed predictions."""
import argparse


def emit(text, out):
    """Print a report and, with -o, write it too."""
    if out:
        with open(out, "w") as f:
            f.write(text)
    print(text)


def main(doc, default_predictions, predict, report, measured_name="CASE"):
    p = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("bin")
    p.add_argument("-o", "--out")
    p.add_argument("--report", help=f"folder of run_steps.py measure outputs (measured-{measured_name}.json)")
    p.add_argument("--predictions", default=default_predictions)
    a = p.parse_args()
    if a.report:
        report(a)
    else:
        if not a.out:
            p.error("-o is required to predict")
        predict(a)
