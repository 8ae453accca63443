// Ctrl-C and SIGTERM during a fuzz campaign: the first one asks the campaign to stop cleanly (no
// new cases; what was found is committed and the summary printed), a second one of the same
// signal kills as usual. mpirun turns Ctrl-C and the loss of a rank into SIGTERM for every rank.
#pragma once

namespace headroom::cli {

void install_stop_signals();
// The signal that asked to stop (SIGINT, SIGTERM), 0 when none did.
int stop_signal();
// "SIGINT", "SIGTERM", or "signal N".
const char* signal_name(int sig);

}  // namespace headroom::cli
