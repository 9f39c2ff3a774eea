/*
 * The two ways a device is named beyond its index, written one way
 * everywhere: a uuid from the vendor's 16 bytes, and a PCI bus id. The GPU
 * plugins write them into accel_device_props; libaccel reads a selection's
 * `pci=` term with the same parser, so that "00000000:41:00.0" (as
 * nvidia-smi prints it), "0000:41:00.0" and "41:00.0" name one device.
 */
#ifndef ACCEL_COMMON_DEVICE_ID_H
#define ACCEL_COMMON_DEVICE_ID_H

#include <stdbool.h>
#include <stddef.h>

/*
 * "PREFIX-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" from 16 bytes, as nvidia-smi
 * prints a GPU's uuid. When every byte is a printable character other than
 * a space (ROCm gives its 16-character unique id this way), they are
 * written as they are instead: "PREFIX-" and the 16 characters.
 */
void accel__uuid_format(const char *prefix, const unsigned char bytes[16],
                        char *out, size_t size);

/*
 * Parse "[domain:]bus:device.function" (hex, either case; the domain up to
 * 8 digits, 0 when absent) from `length` bytes of `text`, and write it as
 * "dddd:bb:dd.f" in lower case. False when it is not one.
 */
bool accel__pci_bus_id_normalize(const char *text, size_t length, char *out,
                                 size_t size);

#endif /* ACCEL_COMMON_DEVICE_ID_H */
