"""Python side of the REPL page (web/index.html), imported in Pyodide as `webjax_repl`.

Runs user code with the picked device as the default device, prints the value of a final
expression like the Python REPL, and shows tracebacks without this module's frames.
"""

import contextlib
import sys
import traceback

from pyodide.code import eval_code_async

import webjax

PLATFORMS = ("cpu", "wasm", "webgpu", "webgl")
FILENAME = "<repl>"
namespace: dict = {"__name__": "__main__"}


def device_choices() -> list[list[str]]:
    """[value, label] pairs for the device picker: the default, then every device found."""
    try:
        choices = [["default", f"default ({webjax.devices()[0]})"]]
    except Exception as e:
        choices = [["default", f"default ({type(e).__name__})"]]
    for platform in PLATFORMS:
        try:
            devices = webjax.devices(platform)
        except Exception:  # JAX raises RuntimeError for a platform it cannot initialize
            continue
        choices += [[f"{platform}:{i}", str(d)] for i, d in enumerate(devices)]
    return choices


def _device_context(choice: str):
    if choice == "default":
        return contextlib.nullcontext()
    platform, index = choice.split(":")
    return webjax.default_device(webjax.devices(platform)[int(index)])


def _print_user_traceback(e: BaseException) -> None:
    tb = e.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != FILENAME:
        tb = tb.tb_next  # drop the frames of this module and of Pyodide's eval_code_async
    traceback.print_exception(type(e), e, tb)


async def run(source: str, choice: str) -> bool:
    """Run `source` in the REPL namespace; True if it raised nothing."""
    try:
        with _device_context(choice):
            result = await eval_code_async(source, namespace, filename=FILENAME)
            if result is not None:
                print(repr(result))
    except BaseException as e:
        _print_user_traceback(e)
        return False
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
    return True
