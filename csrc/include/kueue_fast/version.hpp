#pragma once
namespace kueue_fast {
const char* version();
}
