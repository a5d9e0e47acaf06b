"""A process-pool worker killed while it sends its result, the case that hung
create_pretraining_data.py after SIGTERM: the pool's reader thread waits for
the rest of a message that will never come.

`python killed_mid_send.py` starts a pool whose one worker sends the start of
a result and stops there, ends the workers as `_block_results` does on an
interrupt, shuts the pool down and prints "shut down".
"""

import concurrent.futures
import multiprocessing
import os
import struct
import sys
import time

from bert_tf.compat import kill_pool_workers

HANG_SECONDS = 3600


def send_part_of_a_result(started_file):
    """Pool task: writes the header of a 1 MB result and 10 of its bytes to
    the pool's result pipe, then waits to be killed."""
    result_queue = sys._getframe(1).f_locals["result_queue"]  # of _process_worker
    result_queue._writer._send(struct.pack("!i", 1 << 20) + b"0123456789")
    open(started_file, "w").close()
    time.sleep(HANG_SECONDS)


def main(started_file):
    pool = concurrent.futures.ProcessPoolExecutor(
        1, mp_context=multiprocessing.get_context("spawn")
    )
    pool.submit(send_part_of_a_result, started_file)
    while not os.path.exists(started_file):
        time.sleep(0.05)
    kill_pool_workers(pool)
    pool.shutdown(cancel_futures=True)
    print("shut down")


if __name__ == "__main__":
    main(sys.argv[1])
