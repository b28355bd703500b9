/* version: the release this source is (clsplat --version). */
#ifndef CS_VERSION_H
#define CS_VERSION_H

#define CS_VERSION "0.9.0"

#endif
