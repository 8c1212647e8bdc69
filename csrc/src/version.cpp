#include <kueue_fast/version.hpp>
namespace kueue_fast {
const char* version() { return "0.1.0"; }
}
